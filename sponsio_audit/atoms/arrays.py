"""NumPy views of Arrow arrays, and integer codes: the array arithmetic under ``Columns``.

Validity bitmaps and value buffers are read without copying where Arrow allows,
and codes are kept in the narrowest integer type, because every atom of a
million-row table compares and takes them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def to_numpy(arr: pa.Array | pa.ChunkedArray, fill: Any) -> np.ndarray:
    """A column as NumPy, nulls replaced by ``fill``."""
    return np.asarray(pc.fill_null(arr, fill).to_numpy(zero_copy_only=False))


def valid_mask(arr: pa.Array) -> np.ndarray | None:
    """The validity bitmap of a (contiguous) array as bools, None when it has no nulls."""
    if arr.null_count == 0:
        return None
    if arr.null_count == len(arr) or arr.buffers()[0] is None:
        return np.zeros(len(arr), dtype=bool)
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], np.uint8), bitorder="little")
    return bits[arr.offset : arr.offset + len(arr)].view(bool)


def nonzero(mask: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``pc.indices_nonzero(mask)``, also of a chunked array with no chunks (an empty table's
    column: pyarrow 25 crashed on one, a segmentation fault; pyarrow 26 gives [])."""
    if isinstance(mask, pa.ChunkedArray) and mask.num_chunks == 0:
        return pa.array([], pa.uint64())
    return pc.indices_nonzero(mask)


@functools.cache
def numpy_dtype(t: pa.DataType) -> np.dtype:
    """The NumPy dtype of Arrow values of type ``t`` (``DataType.to_pandas_dtype`` needs
    pandas before pyarrow 26, which no required dependency installs: with pyarrow 25 a scan
    that counted tokens failed, ModuleNotFoundError)."""
    return pa.array([], type=t).to_numpy(zero_copy_only=False).dtype


def raw_values(arr: pa.Array, dtype: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """A fixed-width array's value buffer (zero-copy, read-only: undefined at nulls) and
    its validity (None when it has no nulls)."""
    if len(arr) == 0 or arr.buffers()[1] is None:
        return np.zeros(len(arr), dtype=dtype), valid_mask(arr)
    width = np.dtype(dtype).itemsize
    return np.frombuffer(arr.buffers()[1], dtype, len(arr), arr.offset * width), valid_mask(arr)


def narrow_codes(indices: pa.Array, size: int) -> np.ndarray:
    """Dictionary indices (int32, null: ``size``) as codes in the smallest integer type
    that holds 0..size: a few distinct tools or event types are int8, so every
    comparison and take of the codes moves a quarter of the bytes."""
    dtype = next(t for t in (np.int8, np.int16, np.int32) if size <= np.iinfo(t).max)
    values, valid = raw_values(indices, np.int32)
    out = values.astype(dtype)
    return out if valid is None else select(valid, out, size)


def select(mask: np.ndarray, codes: np.ndarray, fill: int) -> np.ndarray:
    """``np.where(mask, codes, fill)`` for integer codes, by arithmetic (exact: integers
    wrap): a where over a mask with no pattern costs ~3 ms per million rows here, the
    arithmetic ~0.2 ms for int8."""
    keep = mask.view(np.int8) if mask.dtype == bool else mask
    out = codes - codes.dtype.type(fill)
    out *= keep
    out += codes.dtype.type(fill)
    return out


def lookup(lut: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``lut[codes]`` for a bool table, as one comparison when a single code is true."""
    hits = np.flatnonzero(lut)
    if len(hits) == 0:
        return np.zeros(len(codes), dtype=bool)
    if len(hits) == 1:
        return codes == int(hits[0])  # a Python int keeps the comparison in the codes' dtype
    return np.take(lut, codes)
