"""Serializers that only describe responses, for the OpenAPI schema."""

from rest_framework import serializers


class OptionShownSerializer(serializers.Serializer):
    label = serializers.CharField()
    text = serializers.CharField()


class FableShownSerializer(serializers.Serializer):
    alias = serializers.CharField()
    title = serializers.CharField()
    story = serializers.CharField()
    content_note = serializers.CharField()


class NextSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    fable = FableShownSerializer()
    options = OptionShownSerializer(
        many=True, required=False, help_text="MCQA batches: labels A, B, C…"
    )
    morals = OptionShownSerializer(
        many=True, required=False, help_text="Rating batches: labels 1, 2, 3…"
    )
    expires_at = serializers.DateTimeField()


class AnswerResultSerializer(serializers.Serializer):
    answer = serializers.IntegerField()
    surplus = serializers.BooleanField()


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


class SkipResultSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    status = serializers.CharField()
