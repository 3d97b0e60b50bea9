class ServiceError(Exception):
    """A refusal that names what is wrong. The service has changed nothing."""

    status = 400


class Invalid(ServiceError):
    status = 400


class Conflict(ServiceError):
    status = 409


class Forbidden(ServiceError):
    status = 403
