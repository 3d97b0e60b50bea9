from rest_framework import serializers

from annotate.models import Batch


class BatchCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=[Batch.MCQA, Batch.RATING], default=Batch.MCQA)
    fables = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_empty=False,
        help_text="Aliases; omitted means all fables.",
    )
    prefix = serializers.CharField(required=False, help_text="Alias prefix, e.g. gibbs_")
    sample = serializers.IntegerField(required=False, min_value=1)
    seed = serializers.IntegerField(required=False)
    annotators = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    overlap = serializers.IntegerField(min_value=1, default=2)
    flag_double_miss = serializers.BooleanField(default=True)
    flag_skip_comment = serializers.BooleanField(default=True)
    flag_ambiguous = serializers.BooleanField(default=False)
    include_control = serializers.BooleanField(default=False)
    one_per_screen = serializers.BooleanField(default=False)


class BatchProgressSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    overlap = serializers.IntegerField()
    fables = serializers.IntegerField()
    annotators = serializers.IntegerField()
    answers_done = serializers.IntegerField()
    answers_needed = serializers.IntegerField()
    percent = serializers.IntegerField()
    skips = serializers.IntegerField()
    claimed = serializers.IntegerField()
    surplus = serializers.IntegerField()
    closed = serializers.BooleanField()


class AnswerSerializer(serializers.Serializer):
    selected = serializers.ListField(child=serializers.CharField(), required=False)
    ratings = serializers.DictField(child=serializers.IntegerField(), required=False)
    comment = serializers.CharField(required=False, allow_blank=True, default="")


class SkipSerializer(serializers.Serializer):
    comment = serializers.CharField(allow_blank=True, required=False, default="")
