from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from annotate.models import Batch
from annotate.roles import ANNOTATOR


class BatchForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=Batch.KIND_CHOICES, initial=Batch.MCQA)
    selection = forms.ChoiceField(
        choices=[
            ("all", "All fables"),
            ("aliases", "A list of aliases"),
            ("prefix", "An alias prefix"),
            ("sample", "A random sample"),
        ],
        widget=forms.RadioSelect,
    )
    aliases = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="One alias per line (or separated by spaces/commas).",
    )
    prefix = forms.CharField(required=False, help_text="e.g. gibbs_")
    sample = forms.IntegerField(required=False, min_value=1, help_text="Number of fables.")
    seed = forms.IntegerField(required=False, help_text="Seed of the random sample.")
    annotators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(), widget=forms.CheckboxSelectMultiple
    )
    overlap = forms.IntegerField(
        min_value=1, max_value=20, initial=2, help_text="Answers wanted per fable."
    )
    screening = forms.BooleanField(
        required=False, label="Screening round (overlap = every annotator)"
    )
    flag_double_miss = forms.BooleanField(required=False, initial=True, label="Flag double misses")
    flag_skip_comment = forms.BooleanField(
        required=False, initial=True, label="Flag skips with a comment"
    )
    flag_ambiguous = forms.BooleanField(
        required=False, label="Flag fables where both answers are multi-select"
    )
    include_control = forms.BooleanField(
        required=False, label="Rating: include the true moral as a hidden control"
    )
    one_per_screen = forms.BooleanField(required=False, label="Rating: one moral per screen")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["annotators"].queryset = (
            get_user_model()
            .objects.filter(groups__name=ANNOTATOR, is_active=True)
            .order_by("username")
        )

    def clean(self):
        data = super().clean()
        selection = data.get("selection")
        raw = data.get("aliases") or ""
        data["aliases"] = (
            [a for a in raw.replace(",", " ").split() if a] if selection == "aliases" else []
        )
        if selection == "aliases" and not data["aliases"]:
            self.add_error("aliases", "Give at least one alias.")
        if selection == "prefix" and not data.get("prefix"):
            self.add_error("prefix", "Give an alias prefix.")
        if selection != "prefix":
            data["prefix"] = ""
        if selection == "sample" and not data.get("sample"):
            self.add_error("sample", "Give the number of fables to sample.")
        if selection != "sample":
            data["sample"] = None
        return data


class ImportForm(forms.Form):
    file = forms.FileField(help_text="Benchmark JSON array, JSONL, CSV, or fables.json.")
    update = forms.BooleanField(required=False, label="Import changed fables as new revisions")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                f"{upload.name}: {upload.size} bytes is over the limit of "
                f"{settings.IMPORT_MAX_UPLOAD_BYTES} bytes"
            )
        if not upload.name.lower().endswith((".json", ".jsonl", ".ndjson", ".csv")):
            raise forms.ValidationError(f"{upload.name}: choose a .json, .jsonl or .csv file")
        return upload
