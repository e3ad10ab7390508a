"""trec_eval 10.0's set measures without a registry twin (set_relative_P, set_map,
utility), unj and relstring: counts over each query's whole ranking
(or its top k), vectorised over queries like :mod:`._measures`."""

from __future__ import annotations

import numpy as np

from ._measures import where_div

__all__ = ["relstring", "set_map", "set_relative_p", "unj", "utility"]


def relstring(c, params):
    length = int(params.values[0]) if params is not None and params.values else 10
    chars = np.frombuffer(b"<" * 256, dtype=np.uint8).copy()
    chars[0:10] = np.frombuffer(b"0123456789", dtype=np.uint8)
    n = np.minimum(np.maximum(c.n, 0), max(length, 0))
    width = int(n.max(initial=0))
    out = np.empty(c.nq, dtype=object)
    if width == 0:
        out[:] = ""
    else:  # only each query's first `length` rows, laid out as fixed-width bytes
        inside = np.arange(width)[None, :] < n[:, None]
        rel = c.rel[(c.offsets[:-1, None] + np.arange(width)[None, :])[inside]]
        code = np.where(rel > 9, ord(">"), np.where(rel >= 0, chars[np.clip(rel, 0, 9)],
                                                    np.where(rel == -1, ord("-"), ord("."))))
        grid = np.zeros((c.nq, width), dtype=np.uint8)  # NUL padding: dropped by "S"
        grid[inside] = code
        out[:] = [b.decode() for b in grid.view(f"S{width}").ravel().tolist()]
    name = "relstring" if params is None else f"relstring_{params.text}"
    return [(name, out)]


def utility(c, params):
    values = params.values if params is not None else [1.0, -1.0, 0.0, 0.0]
    if len(values) != 4:
        raise ValueError("utility needs exactly 4 coefficients (trec_eval: improper number "
                         f"of coefficients); got {len(values)}")
    a, b, cc, d = values
    nrr, n, r = c.num_rel_ret, c.n, c.num_rel
    v = np.array([a * x + b * (y - x) + cc * (z - x) + d * (c.n_docs + x - y - z)
                  for x, y, z in zip(nrr.tolist(), n.tolist(), r.tolist(), strict=True)])
    return [("utility" if params is None else f"utility_{params.text}", v.reshape(c.nq))]


def set_relative_p(c, _):
    ok = (c.n > 0) & (c.num_rel > 0)
    return [("set_relative_P", where_div(ok, c.num_rel_ret, np.minimum(c.n, c.num_rel)))]


def set_map(c, _):
    ok = (c.n > 0) & (c.num_rel > 0)
    nrr = c.num_rel_ret.astype(np.float64)
    return [("set_map", where_div(ok, nrr * nrr, c.n.astype(float) * c.num_rel))]


def unj(c, ks):
    unjudged = c.rel < 0
    cum = np.cumsum(unjudged, dtype=np.int64)
    before = np.concatenate(([0], cum))
    out = []
    for k in ks:
        depth = np.minimum(k, c.n)
        top = before[c.offsets[:-1] + depth] - before[c.offsets[:-1]]
        out.append((f"unj_{k}", top / float(k)))
    return out
