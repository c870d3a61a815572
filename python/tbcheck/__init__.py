# tbcheck from Python: the model checker's devices, hypotheses, simulator, stepping scheduler, validation and
# distinguish (docs/python.md). The work is done by the C++ libraries in tbcheck._core; this file names the API.
"""tbcheck: the NVIDIA thread-block scheduler model checker, from Python (docs/python.md).

Results are plain Python data: predict() returns one dict per block (pandas.DataFrame takes the list),
validate() and distinguish() the documents `tbcheck validate --json` and `tbcheck distinguish --json`
print, with enum names as strings; Scheduler steps the block scheduler inside a simulator loop written
in Python (kernels as dicts, placements as lists of dicts). Bad input raises tbcheck.InputError (a
ValueError) carrying the message the CLI prints after "tbcheck: error: ".
"""
from ._core import (  # noqa: F401  (the public API)
    Device,
    Hypothesis,
    InputError,
    Scenario,
    Scheduler,
    __version__,
    composition,
    compositions,
    device,
    devices,
    distinguish,
    hypotheses,
    hypothesis,
    predict,
    resolve_hypotheses,
    scenario,
    validate,
)

__all__ = [
    "Device", "Hypothesis", "InputError", "Scenario", "Scheduler", "composition", "compositions", "device", "devices",
    "distinguish", "hypotheses", "hypothesis", "predict", "resolve_hypotheses", "scenario", "validate",
]
