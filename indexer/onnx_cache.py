"""The embedding model as onnxruntime optimises it for this machine, kept for the next load.

Building an ``InferenceSession`` for the int8 MiniLM spends most of its ~150–200 ms
optimising the graph (``ORT_ENABLE_ALL``), in native code that holds the GIL: on a cold
CLI search that is time the engine's imports on the main thread wait. onnxruntime can
write the graph it optimised (``SessionOptions.optimized_model_filepath``, weights as
external data beside it); loading that copy with optimisations off builds the session in
~40–90 ms and answers with the same numbers (the same kernels on the same graph).

An optimised graph may hold kernels chosen for this CPU and runtime (onnxruntime's
documentation says so of ``ORT_ENABLE_ALL``), so a copy is kept per model file, runtime
version, machine and CPU flags: ``$XDG_CACHE_HOME/codesift/onnx/<key>/`` (~60 MB for
the int8 model). The first load without a copy writes one (into a staging folder
renamed into place, so a reader never sees half a copy); any failure to write or to load
it falls back to the model itself. ``CODESIFT_ONNX_CACHE`` names another folder, or
``0`` turns the copy off.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import shutil
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CACHE_ENV = "CODESIFT_ONNX_CACHE"
_EXTERNAL_NAME = "session.optimized_model_external_initializers_file_name"
_EXTERNAL_MIN = "session.optimized_model_external_initializers_min_size_in_bytes"
_NO_PREPACK = "session.disable_prepacking"


def cache_root() -> Path | None:
    """Where optimised copies live; None when turned off (``CODESIFT_ONNX_CACHE=0``)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None:
        return Path(chosen).expanduser() if chosen not in ("", "0") else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "codesift" / "onnx"


def _cpu_flags() -> str:
    """The CPU's feature flags (Linux), else what ``platform`` says of the processor."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(("flags", "Features")):
                return line.partition(":")[2].strip()
    return platform.processor()


def optimized_dir(model_file: Path, runtime_version: str) -> Path | None:
    """The folder an optimised copy of ``model_file`` (and its external data) lives in for
    this runtime and machine; None when copies are off or the model cannot be read."""
    root = cache_root()
    if root is None:
        return None
    parts = [runtime_version, platform.machine(), _cpu_flags()]
    for path in (model_file, model_file.with_name(model_file.name + ".data")):
        try:
            stat = path.stat()
        except FileNotFoundError:
            parts.append(f"{path.name}: none")
            continue
        except OSError:
            return None
        parts.append(f"{path.resolve()}: {stat.st_size} {stat.st_mtime_ns}")
    key = hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return root / key


def staging_dir(target: Path) -> Path | None:
    """A fresh folder beside ``target`` for onnxruntime to write a copy into; None when
    it cannot be made (a read-only cache)."""
    staging = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
    except OSError:
        return None
    return staging


def write_copy_to(options: Any, staging: Path, model_name: str) -> None:
    """Ask onnxruntime (``options``: its ``SessionOptions``) to write the graph it
    optimises into ``staging``, every weight of 1 KiB or more in one data file beside it."""
    options.optimized_model_filepath = str(staging / model_name)
    options.add_session_config_entry(_EXTERNAL_NAME, model_name + ".data")
    options.add_session_config_entry(_EXTERNAL_MIN, "1024")


def publish(staging: Path, target: Path, model_name: str) -> bool:
    """Move a written copy into place; False (and the staging folder removed) when
    onnxruntime wrote nothing or another process published first."""
    try:
        if (staging / model_name).is_file() and not target.exists():
            staging.rename(target)
            return True
    except OSError:
        pass
    shutil.rmtree(staging, ignore_errors=True)
    return False


def session_of(ort: Any, model: Path, *, prepack: bool = True) -> tuple[Any, Path]:
    """An ``InferenceSession`` of ``model`` (``ort``: the onnxruntime module) and the
    ``model.onnx`` it loaded: this machine's optimised copy when there is one that loads,
    else the model itself, fully optimised, writing the copy when there is none yet and
    the cache is writable. ``prepack`` False: no pre-packed copy of the weights (the runs
    read them where they are mapped). Raises what onnxruntime raises for the model itself."""
    version = str(ort.__version__)
    folder = optimized_dir(model, version)
    if folder is not None and (folder / model.name).is_file():
        copy = folder / model.name
        try:
            return _session(ort, copy, ort.GraphOptimizationLevel.ORT_DISABLE_ALL, prepack=prepack), copy
        except Exception as exc:
            log.info("the optimised copy of the model at %s does not load (%s): using the model", folder, exc)
    staging = staging_dir(folder) if folder is not None and not folder.exists() else None
    try:
        session = _session(ort, model, ort.GraphOptimizationLevel.ORT_ENABLE_ALL, staging, prepack=prepack)
    except Exception:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    if staging is not None and folder is not None:
        publish(staging, folder, model.name)
    return session, model


def _session(ort: Any, model: Path, level: Any, staging: Path | None = None, *, prepack: bool = True) -> Any:
    options = ort.SessionOptions()
    if not prepack:
        options.add_session_config_entry(_NO_PREPACK, "1")
    # One thread per run; OnnxEmbedder.embed_documents runs several batches at once.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = level
    options.log_severity_level = 3
    if staging is not None:
        write_copy_to(options, staging, model.name)
    return ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
