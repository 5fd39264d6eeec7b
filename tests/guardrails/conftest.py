"""The action tests' simulated cluster and inline Celery, for the guard rails' service tests."""

from tests.actions.conftest import eager, sim

__all__ = ["eager", "sim"]
