"""The tools' definitions as data: ``tools.json``, a copy of the service's own listing (read by
:mod:`kbsim.store.schema`)."""
