from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "annotate"
    default_auto_field = "django.db.models.BigAutoField"
