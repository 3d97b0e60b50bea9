from django.core.management import call_command

from annotate.models import Batch, Fable, ModelMoral


def test_demo_setup_twice_is_safe(db, capsys, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        call_command("demo_setup")
        first = capsys.readouterr().out
        call_command("demo_setup")
    assert "33 created" in first and "demo-pass-2024" in first
    assert Fable.objects.count() == 33 and Batch.objects.count() == 2
    assert ModelMoral.objects.count() == 33
    assert "0 created, 33 unchanged" in capsys.readouterr().out
