"""Arrow helpers that must hold on every pyarrow the package accepts (``pyarrow>=15``): pip
installs pyarrow 25 for Python 3.10 here, where two calls the package made failed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sponsio_audit.atoms.arrays import nonzero, numpy_dtype
from sponsio_audit.event import EVENT_SCHEMA


def test_nonzero_of_a_column_with_no_chunks_is_empty() -> None:
    """pyarrow 25's ``indices_nonzero`` crashed (a segmentation fault) on a chunked array
    with no chunks: a scan with no contract (``--allow-empty``) died there."""
    assert nonzero(pa.chunked_array([], type=pa.bool_())).to_pylist() == []
    assert nonzero(pa.chunked_array([pa.array([], pa.bool_())])).to_pylist() == []
    mask = pa.chunked_array([[True, False], [None, True]], type=pa.bool_())
    assert nonzero(mask).to_pylist() == [0, 3]


def test_numpy_dtype_needs_no_pandas() -> None:
    """The dtype a fixed-width events column's values have in NumPy (before pyarrow 26,
    ``DataType.to_pandas_dtype`` imported pandas, which no required dependency installs)."""
    want = {"int64": np.dtype(np.int64), "bool": np.dtype(np.bool_)}
    for f in EVENT_SCHEMA:
        if str(f.type) in want:
            assert numpy_dtype(f.type) == want[str(f.type)], f.name
    assert numpy_dtype(pa.float64()) == np.dtype(np.float64)
