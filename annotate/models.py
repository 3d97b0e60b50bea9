"""Data model. Fields, constraints and indexes only: no side effects in save(), no signals.

Invariants that the database enforces (see services/routing.md):
- one ground_truth option per revision (partial unique index);
- one assignment per (batch, fable, annotator);
- at most `overlap` counted answers per batch item: an answer counts only by taking one
  of the item's `overlap` Slot rows, and Answer.slot is unique.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

GROUND_TRUTH = "ground_truth"
EXPERT = "expert"
KNOWN_KINDS = [
    GROUND_TRUTH,
    "similar_characters",
    "injected_adjectives",
    "based_on_adjectives",
    "partial_story",
    "pre_moral",
    "post_moral",
    "moral_from_injected_adjs",
    EXPERT,
]


class Fable(models.Model):
    alias = models.CharField(max_length=200, unique=True)
    title = models.CharField(max_length=500)
    story = models.TextField()
    source = models.CharField(max_length=100, db_index=True, help_text="From the alias prefix.")
    content_note = models.TextField(blank=True)
    is_altered = models.BooleanField(default=False)
    # The revision annotators are shown now; older ones stay for history and old answers.
    current_revision = models.ForeignKey(
        "Revision", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    import_order = models.PositiveIntegerField(default=0, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["import_order", "id"]
        constraints = [models.CheckConstraint(condition=~Q(story=""), name="fable_story_not_empty")]

    def __str__(self) -> str:
        return self.alias


class Revision(models.Model):
    fable = models.ForeignKey(Fable, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    reason = models.CharField(max_length=500)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # A proposal (e.g. fables.json's alternative_moral) waits for a reviewer to adopt it.
    proposed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["fable_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["fable", "number"], name="revision_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="revision_number_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.fable_id} v{self.number}"


class Option(models.Model):
    revision = models.ForeignKey(Revision, on_delete=models.CASCADE, related_name="options")
    position = models.PositiveSmallIntegerField(help_text="Index in the source's choices.")
    text = models.TextField()
    kind = models.CharField(max_length=50)

    class Meta:
        ordering = ["revision_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["revision", "position"], name="option_position_unique"),
            models.UniqueConstraint(
                fields=["revision", "text", "kind"], name="option_text_kind_unique"
            ),
            models.UniqueConstraint(
                fields=["revision"],
                condition=Q(kind=GROUND_TRUTH),
                name="option_one_ground_truth",
            ),
            models.CheckConstraint(condition=~Q(text=""), name="option_text_not_empty"),
            models.CheckConstraint(condition=~Q(kind=""), name="option_kind_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.text[:60]}"


class Batch(models.Model):
    MCQA = "mcqa"
    RATING = "rating"
    KIND_CHOICES = [(MCQA, "Multiple choice"), (RATING, "Rate model morals")]

    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=KIND_CHOICES, default=MCQA)
    overlap = models.PositiveSmallIntegerField(default=2)
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="BatchMember", related_name="batches"
    )
    flag_double_miss = models.BooleanField(default=True)
    flag_skip_comment = models.BooleanField(default=True)
    flag_ambiguous = models.BooleanField(default=False)
    # Rating batches.
    include_control = models.BooleanField(
        default=False, help_text="Rate the true moral too, as a hidden control."
    )
    one_per_screen = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="batch_overlap_positive")
        ]

    def __str__(self) -> str:
        return self.name


class BatchMember(models.Model):
    PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    screening = models.CharField(
        max_length=10,
        choices=[(PENDING, "pending"), (ACCEPTED, "accepted"), (REJECTED, "rejected")],
        default=PENDING,
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch", "user"], name="batch_member_unique")
        ]


class BatchItem(models.Model):
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="items")
    fable = models.ForeignKey(Fable, on_delete=models.PROTECT, related_name="batch_items")
    # A fable sent back after review comes again as a later round in a batch.
    round = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["batch", "fable", "round"], name="batch_item_unique")
        ]


class Slot(models.Model):
    """One of the `overlap` places for a counted answer of a batch item.

    A claim leases a free slot; an answer fills it. Slots are created with the item, so
    the number of counted answers can never exceed the overlap (Answer.slot is unique).
    """

    # No index of its own: slot_open_idx leads with batch, and a second index on batch
    # tempts the planner into sorting a fresh batch's slots (stale statistics).
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="+", db_index=False)
    item = models.ForeignKey(BatchItem, on_delete=models.CASCADE, related_name="slots")
    fable = models.ForeignKey(Fable, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveSmallIntegerField()
    # 0 once the item has an answer (finish what is started), else 1.
    priority = models.PositiveSmallIntegerField(default=1)
    order_key = models.IntegerField(help_text="Stable pseudo-random order within the batch.")
    filled = models.BooleanField(default=False)
    # Sent back after review: only for annotators who never saw this fable in any batch.
    fresh_only = models.BooleanField(default=False)
    holder = models.ForeignKey(
        "Assignment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "number"], name="slot_number_unique"),
        ]
        indexes = [
            # The claim query walks this index in order and stops at the first free slot.
            models.Index(
                fields=["batch", "priority", "order_key", "number"],
                condition=Q(filled=False),
                name="slot_open_idx",
            )
        ]


class Assignment(models.Model):
    CLAIMED, SUBMITTED, SKIPPED, EXPIRED = "claimed", "submitted", "skipped", "expired"
    STATUS_CHOICES = [(s, s) for s in (CLAIMED, SUBMITTED, SKIPPED, EXPIRED)]

    # Indexed by the unique (batch, fable, annotator) constraint, which the claim's
    # anti-join probes; a separate batch index would only mislead the planner.
    batch = models.ForeignKey(
        Batch, on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    item = models.ForeignKey(BatchItem, on_delete=models.CASCADE, related_name="assignments")
    fable = models.ForeignKey(Fable, on_delete=models.PROTECT, related_name="assignments")
    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    # Ids of the options (MCQA) or model morals (rating) in the order shown; label i = index i.
    order = models.JSONField()
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=CLAIMED)
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    skip_comment = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["batch", "fable", "annotator"], name="assignment_once_per_annotator"
            ),
        ]
        indexes = [models.Index(fields=["annotator", "batch", "status"])]


class Answer(models.Model):
    """An MCQA answer or a set of ratings. slot is None for a surplus (late) answer."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="answer")
    slot = models.OneToOneField(
        Slot, null=True, blank=True, on_delete=models.PROTECT, related_name="answer"
    )
    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="answers")
    fable = models.ForeignKey(Fable, on_delete=models.PROTECT, related_name="answers")
    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="answers")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="answers"
    )
    # MCQA: option ids in click order (first = primary).
    selected = models.JSONField(default=list)
    # The request body as received, so that an identical retry is recognised.
    payload = models.JSONField()
    comment = models.TextField(blank=True)
    seconds = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["batch", "fable"])]

    @property
    def surplus(self) -> bool:
        return self.slot_id is None


class Flag(models.Model):
    DOUBLE_MISS, SKIP_COMMENT, AMBIGUOUS, ALTERNATIVE = (
        "double_miss",
        "skip_comment",
        "ambiguous",
        "alternative_moral",
    )
    REASON_CHOICES = [
        (r, r.replace("_", " ")) for r in (DOUBLE_MISS, SKIP_COMMENT, AMBIGUOUS, ALTERNATIVE)
    ]
    OPEN, RESOLVED, DISMISSED = "open", "resolved", "dismissed"
    STATUS_CHOICES = [(s, s) for s in (OPEN, RESOLVED, DISMISSED)]

    fable = models.ForeignKey(Fable, on_delete=models.CASCADE, related_name="flags")
    batch = models.ForeignKey(
        Batch, null=True, blank=True, on_delete=models.CASCADE, related_name="flags"
    )
    item = models.ForeignKey(
        BatchItem, null=True, blank=True, on_delete=models.CASCADE, related_name="flags"
    )
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    revision = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="flags")
    reason = models.CharField(max_length=30, choices=REASON_CHOICES)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=OPEN)
    note = models.TextField(blank=True)
    new_revision = models.ForeignKey(
        Revision, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # A rule fires once per batch item (or once per skipped assignment).
            models.UniqueConstraint(
                fields=["item", "reason"], condition=Q(assignment=None), name="flag_once_per_item"
            ),
            models.UniqueConstraint(
                fields=["assignment", "reason"],
                condition=Q(assignment__isnull=False),
                name="flag_once_per_skip",
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]


class ReviewEvent(models.Model):
    """The history of a fable: who did what to it, when."""

    fable = models.ForeignKey(Fable, on_delete=models.CASCADE, related_name="events")
    flag = models.ForeignKey(
        Flag, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=30)
    detail = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class ModelConfig(models.Model):
    OPENAI, BASELINE = "openai_compatible", "baseline"
    PROVIDER_CHOICES = [(OPENAI, "OpenAI-compatible API"), (BASELINE, "Baseline (TF-IDF)")]

    name = models.CharField(max_length=100, unique=True, help_text="Display name (admins only).")
    provider = models.CharField(max_length=30, choices=PROVIDER_CHOICES)
    base_url = models.URLField(blank=True)
    model_id = models.CharField(max_length=200, blank=True)
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        help_text="Name of the environment variable that holds the API key (never the key).",
    )
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=100)
    requests_per_minute = models.PositiveIntegerField(default=60)
    # Rate limit shared by every worker: each request reserves the next free moment.
    next_request_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name

    @property
    def is_baseline(self) -> bool:
        return self.provider == self.BASELINE


class ModelMoral(models.Model):
    PENDING, RUNNING, DONE, FAILED = "pending", "running", "done", "failed"
    STATUS_CHOICES = [(s, s) for s in (PENDING, RUNNING, DONE, FAILED)]

    fable = models.ForeignKey(Fable, on_delete=models.CASCADE, related_name="model_morals")
    model = models.ForeignKey(ModelConfig, on_delete=models.CASCADE, related_name="morals")
    prompt_version = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=PENDING)
    text = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    raw = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["fable", "model", "prompt_version"], name="model_moral_once"
            ),
            models.CheckConstraint(
                condition=~Q(status="done") | ~Q(text=""), name="model_moral_done_has_text"
            ),
        ]
        indexes = [models.Index(fields=["model", "status"])]


class RatingTarget(models.Model):
    """A moral rated in a rating batch: a model moral, or the true moral as a hidden control."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="rating_targets")
    fable = models.ForeignKey(Fable, on_delete=models.CASCADE, related_name="+")
    model_moral = models.ForeignKey(ModelMoral, null=True, blank=True, on_delete=models.CASCADE)
    control_option = models.ForeignKey(Option, null=True, blank=True, on_delete=models.PROTECT)
    text = models.TextField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(model_moral__isnull=True) ^ Q(control_option__isnull=True),
                name="rating_target_one_source",
            )
        ]
        indexes = [models.Index(fields=["batch", "fable"])]


class Rating(models.Model):
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="ratings")
    target = models.ForeignKey(RatingTarget, on_delete=models.CASCADE, related_name="ratings")
    score = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "target"], name="rating_once"),
            models.CheckConstraint(
                condition=Q(score__gte=1) & Q(score__lte=5), name="rating_score_1_to_5"
            ),
        ]


class BenchProbe(models.Model):
    """Rows written by the benchmark's baseline view (one indexed SELECT + one INSERT)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
