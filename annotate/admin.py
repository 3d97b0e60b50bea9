from django.contrib import admin

from annotate import models


class OptionInline(admin.TabularInline):
    model = models.Option
    extra = 0


class RevisionInline(admin.TabularInline):
    model = models.Revision
    extra = 0
    fields = ("number", "reason", "author", "proposed", "created_at")
    readonly_fields = ("created_at",)
    show_change_link = True


@admin.register(models.Fable)
class FableAdmin(admin.ModelAdmin):
    list_display = ("alias", "title", "source", "current_revision", "content_note")
    list_filter = ("source", "is_altered")
    search_fields = ("alias", "title", "story")
    inlines = [RevisionInline]
    raw_id_fields = ("current_revision",)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("current_revision")


@admin.register(models.Revision)
class RevisionAdmin(admin.ModelAdmin):
    list_display = ("fable", "number", "reason", "author", "proposed", "created_at")
    list_select_related = ("fable", "author")
    search_fields = ("fable__alias",)
    inlines = [OptionInline]
    raw_id_fields = ("fable",)


@admin.register(models.Option)
class OptionAdmin(admin.ModelAdmin):
    list_display = ("revision", "position", "kind", "text")
    list_filter = ("kind",)
    list_select_related = ("revision__fable",)
    raw_id_fields = ("revision",)


class MemberInline(admin.TabularInline):
    model = models.BatchMember
    extra = 0


@admin.register(models.Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "overlap", "created_at", "closed_at")
    inlines = [MemberInline]


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("batch", "fable", "annotator", "status", "claimed_at", "expires_at")
    list_filter = ("status", "batch")
    list_select_related = ("batch", "fable", "annotator")
    raw_id_fields = ("batch", "item", "fable", "revision", "annotator")


@admin.register(models.Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ("batch", "fable", "annotator", "surplus", "created_at")
    list_filter = ("batch",)
    list_select_related = ("batch", "fable", "annotator")
    raw_id_fields = ("assignment", "slot", "batch", "fable", "revision", "annotator")

    @admin.display(boolean=True)
    def surplus(self, obj):
        return obj.slot_id is None


@admin.register(models.Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = ("fable", "reason", "status", "batch", "created_at")
    list_filter = ("reason", "status")
    list_select_related = ("fable", "batch")
    raw_id_fields = ("fable", "batch", "item", "assignment", "revision", "new_revision")


@admin.register(models.ReviewEvent)
class ReviewEventAdmin(admin.ModelAdmin):
    list_display = ("fable", "action", "actor", "created_at")
    list_select_related = ("fable", "actor")


@admin.register(models.ModelConfig)
class ModelConfigAdmin(admin.ModelAdmin):
    list_display = ("name", "provider", "model_id", "base_url", "api_key_env")


@admin.register(models.ModelMoral)
class ModelMoralAdmin(admin.ModelAdmin):
    list_display = ("fable", "model", "status", "prompt_version", "attempts")
    list_filter = ("status", "model")
    list_select_related = ("fable", "model")
    raw_id_fields = ("fable",)
