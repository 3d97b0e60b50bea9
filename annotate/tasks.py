"""Celery tasks: thin wrappers that take ids and call one service."""

from celery import shared_task

from annotate.services import generation


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def generate_moral(self, moral_id: int) -> str:
    outcome = generation.moral_generate(moral_id=moral_id)
    if outcome.status == "retry":
        raise self.retry(countdown=outcome.retry_in)
    return outcome.status


@shared_task
def requeue_stale_morals() -> int:
    return generation.morals_requeue_stale()
