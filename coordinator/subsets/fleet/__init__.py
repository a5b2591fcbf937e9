"""The class datasets (and the table corpus) merged by the fleet's own workers: ``subsets`` or ``tables`` with
``--queue-url``. :mod:`.job` holds the job under DEST and runs one task message (:func:`.job.handle_task`, which
``quadfleet work`` calls); :mod:`.stages` the tasks themselves; :mod:`.command` the command's side, which starts
the job and waits for it; :mod:`.watch` what a waiting command says, and does, when the merge stops moving."""
from .job import handle_task, jobs_of, progress   # what the worker and ``quadfleet status`` call

__all__ = ["handle_task", "jobs_of", "progress"]
