/* calculators._kernels: the few loops of `slakit credits` that numpy can only write as several
 * whole-array passes (sorts, searches, gathers), written as one pass each.
 *
 * Every function here has a numpy (or Arrow) form in the module that calls it, which stays the
 * definition: the tests compare the two on random and hostile inputs
 * (tests/calculators/test_kernels.py), and the numpy form serves where this module was not
 * built (no C compiler at install time).
 *
 * Arguments are buffers (numpy arrays, Arrow buffers, bytes): read through the buffer protocol,
 * checked for their item size and length, never written past. Nothing here keeps a reference to
 * a buffer after it returns, and the loops hold no Python object, so they run without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SHIFT 33
/* (unit << 33) | time as numpy computes it on int64: the bits of a two's complement shift */
#define KEY(u, t) ((int64_t)(((uint64_t)(u) << SHIFT) | (uint64_t)(t)))

typedef struct {
    Py_buffer view;
    int held;
} Buf;

static void release(Buf *b) {
    if (b->held) {
        PyBuffer_Release(&b->view);
        b->held = 0;
    }
}

/* A C-contiguous buffer of `n` items of `itemsize` bytes (n < 0: any count, a multiple of it). */
static int get_buf(PyObject *obj, Buf *b, Py_ssize_t itemsize, int writable, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &b->view, flags) < 0)
        return -1;
    b->held = 1;
    if (itemsize == 8) {
        /* 64-bit signed integers in native order: numpy's int64 ('l' or 'q'), nothing else */
        const char *f = b->view.format ? b->view.format : "B";
        if (*f == '@' || *f == '=' || *f == '<')
            f++;
        if (b->view.itemsize != 8 || !((f[0] == 'l' || f[0] == 'q') && f[1] == 0)) {
            PyErr_Format(PyExc_TypeError, "%s: expected 64-bit integers, got items of format '%s'", what,
                         b->view.format ? b->view.format : "B");
            release(b);
            return -1;
        }
    }
    if (b->view.len % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes are not a whole number of %zd-byte items", what,
                     b->view.len, itemsize);
        release(b);
        return -1;
    }
    return 0;
}

static Py_ssize_t count_of(Buf *b, Py_ssize_t itemsize) { return b->view.len / itemsize; }

static void release_all(Buf *b, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        release(&b[i]);
}

/* The n arguments of a kernel that are all int64 buffers, taken in order: those from
 * `first_out` on must be writable. On failure the ones taken are released and -1 returned. */
static int take_bufs(PyObject *args, Py_ssize_t n, Buf *b, const char *const *names, Py_ssize_t first_out,
                     const char *kernel) {
    memset(b, 0, (size_t)n * sizeof(Buf));
    if (PyTuple_GET_SIZE(args) != n) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments (%zd given)", kernel, n, PyTuple_GET_SIZE(args));
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (get_buf(PyTuple_GET_ITEM(args, i), &b[i], 8, i >= first_out, names[i]) < 0) {
            release_all(b, i);
            return -1;
        }
    }
    return 0;
}

/* --- overlap pairs --------------------------------------------------------------------------
 *
 * overlap_lo(a_unit, a_start, a_end, order, b_unit, b_start, b_end, lo, cnt) -> total
 *
 * The intervals a[order[0]], a[order[1]], ... are sorted by (unit, start); b is sorted by
 * (unit, start) and disjoint per unit. For each k, lo[k] is the first b whose end key is above
 * a[order[k]]'s start key (numpy: searchsorted(b_end_keys, a_start_keys, side="right")) and cnt[k]
 * the number of b from lo[k] on whose start key is below a[order[k]]'s end key
 * (searchsorted(b_start_keys, a_end_keys, side="left") - lo, at least 0). The keys are
 * (unit << 33) | time, as calculators.intervals.key makes them. Since the a starts only grow,
 * lo only grows: one walk over b, not a search per interval.
 */
static PyObject *overlap_lo(PyObject *self, PyObject *args) {
    Buf b[9];
    static const char *const names[9] = {"a_unit", "a_start", "a_end", "order", "b_unit", "b_start", "b_end", "lo", "cnt"};
    if (take_bufs(args, 9, b, names, 7, __func__) < 0)
        return NULL;
    Py_ssize_t na = count_of(&b[0], 8), nk = count_of(&b[3], 8), nb = count_of(&b[4], 8);
    PyObject *result = NULL;
    if (count_of(&b[1], 8) != na || count_of(&b[2], 8) != na || count_of(&b[5], 8) != nb ||
        count_of(&b[6], 8) != nb || count_of(&b[7], 8) != nk || count_of(&b[8], 8) != nk) {
        PyErr_SetString(PyExc_ValueError, "overlap_lo: arrays of unequal length");
        goto done;
    }
    const int64_t *au = b[0].view.buf, *as = b[1].view.buf, *ae = b[2].view.buf, *order = b[3].view.buf;
    const int64_t *bu = b[4].view.buf, *bs = b[5].view.buf, *be = b[6].view.buf;
    int64_t *lo = b[7].view.buf, *cnt = b[8].view.buf;
    int64_t total = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t j = 0;
    for (Py_ssize_t k = 0; k < nk; k++) {
        int64_t i = order[k];
        if (i < 0 || i >= na) {
            bad = 1;
            break;
        }
        int64_t ks = KEY(au[i], as[i]);
        int64_t ke = KEY(au[i], ae[i]);
        while (j < nb && KEY(bu[j], be[j]) <= ks)
            j++;
        Py_ssize_t h = j;
        while (h < nb && KEY(bu[h], bs[h]) < ke)
            h++;
        lo[k] = j;
        cnt[k] = h - j;
        total += h - j;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_IndexError, "overlap_lo: an order entry is out of range");
        goto done;
    }
    result = PyLong_FromLongLong(total);
done:
    release_all(b, 9);
    return result;
}

/* overlap_fill(order, lo, cnt, ai, bj): the pairs (order[k], lo[k] + m) for m < cnt[k], k in
 * order, into ai and bj (whose length is the sum of cnt). */
static PyObject *overlap_fill(PyObject *self, PyObject *args) {
    Buf b[5];
    static const char *const names[5] = {"order", "lo", "cnt", "ai", "bj"};
    if (take_bufs(args, 5, b, names, 3, __func__) < 0)
        return NULL;
    Py_ssize_t nk = count_of(&b[0], 8), np_ = count_of(&b[3], 8);
    PyObject *result = NULL;
    if (count_of(&b[1], 8) != nk || count_of(&b[2], 8) != nk || count_of(&b[4], 8) != np_) {
        PyErr_SetString(PyExc_ValueError, "overlap_fill: arrays of unequal length");
        goto done;
    }
    const int64_t *order = b[0].view.buf, *lo = b[1].view.buf, *cnt = b[2].view.buf;
    int64_t *ai = b[3].view.buf, *bj = b[4].view.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = 0;
    for (Py_ssize_t k = 0; k < nk && !bad; k++) {
        int64_t c = cnt[k];
        if (c < 0 || c > np_ - p || lo[k] < 0 || lo[k] > INT64_MAX - c) {
            bad = 1;
            break;
        }
        for (int64_t m = 0; m < c; m++, p++) {
            ai[p] = order[k];
            bj[p] = lo[k] + m;
        }
    }
    if (p != np_)
        bad = 1;
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "overlap_fill: the counts do not add up to the output's length, or a start "
                                          "is negative or too large");
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    release_all(b, 5);
    return result;
}

/* --- at least k at once ----------------------------------------------------------------------
 *
 * at_least_sorted(keys, deltas, threshold, out_unit, out_start, out_end) -> count
 *
 * keys: the sorted event keys of a sweep, (unit << 33) | time; with deltas None, each key is
 * shifted left by one with 1 in its lowest bit for an end (a -1) and 0 for a start (a +1), as
 * calculators.intervals.sweep sorts them; otherwise deltas[i] is the change of key i. The level
 * after a key's last event holds until the unit's next key; where it is at least
 * threshold[unit], that stretch is down, and stretches that touch are one interval. The merged
 * intervals (sorted by unit and start) go to the outputs, which hold one item per key (more
 * than there can be intervals); the count written is returned. numpy: `_at_least` (sweep, a
 * mask, merge). With tb and ib, the keys are packed as calculators.intervals.order_by packs
 * them, ((unit << tb | time) << ib) | position, and deltas[position] is the event's change.
 */
typedef struct {
    int mode;                  /* 0: sign in the lowest bit; 1: deltas by key; 2: packed, deltas by position */
    const int64_t *keys, *deltas;
    int tb, ib;
    Py_ssize_t nd;
} Events;

/* event i: its comparable key, unit, time and change of level; 0 when a position is out of range */
static inline int event(const Events *ev, Py_ssize_t i, int64_t *key, int64_t *unit, int64_t *time, int64_t *delta) {
    int64_t k = ev->keys[i];
    if (ev->mode == 0) {
        *key = k >> 1;
        *unit = *key >> SHIFT;
        *time = *key & (((int64_t)1 << SHIFT) - 1);
        *delta = 1 - 2 * (k & 1);
    } else if (ev->mode == 1) {
        *key = k;
        *unit = k >> SHIFT;
        *time = k & (((int64_t)1 << SHIFT) - 1);
        *delta = ev->deltas[i];
    } else {
        int64_t pos = k & (((int64_t)1 << ev->ib) - 1);
        if (pos >= ev->nd)
            return 0;
        *key = k >> ev->ib;
        *unit = *key >> ev->tb;
        *time = *key & (((int64_t)1 << ev->tb) - 1);
        *delta = ev->deltas[pos];
    }
    return 1;
}

static PyObject *at_least_sorted(PyObject *self, PyObject *args) {
    PyObject *o_keys, *o_deltas, *o_thr, *o_u, *o_s, *o_e;
    int tb = -1, ib = -1;
    if (!PyArg_ParseTuple(args, "OOOOOO|ii", &o_keys, &o_deltas, &o_thr, &o_u, &o_s, &o_e, &tb, &ib))
        return NULL;
    int packed = tb >= 0 || ib >= 0;
    if (packed && (tb < 0 || ib < 0 || tb > 40 || ib > 40 || (o_deltas == Py_None))) {
        PyErr_SetString(PyExc_ValueError, "at_least_sorted: packed keys take deltas and 0 <= tb, ib <= 40");
        return NULL;
    }
    Buf k = {0}, d = {0}, thr = {0}, ou = {0}, os_ = {0}, oe = {0};
    PyObject *result = NULL;
    int signed_keys = o_deltas == Py_None;
    if (get_buf(o_keys, &k, 8, 0, "keys") < 0)
        return NULL;
    if (!signed_keys && get_buf(o_deltas, &d, 8, 0, "deltas") < 0)
        goto done;
    if (get_buf(o_thr, &thr, 8, 0, "threshold") < 0 || get_buf(o_u, &ou, 8, 1, "out_unit") < 0 ||
        get_buf(o_s, &os_, 8, 1, "out_start") < 0 || get_buf(o_e, &oe, 8, 1, "out_end") < 0)
        goto done;
    Py_ssize_t n = count_of(&k, 8), nt = count_of(&thr, 8);
    if ((!signed_keys && !packed && count_of(&d, 8) != n) || count_of(&ou, 8) < n || count_of(&os_, 8) < n ||
        count_of(&oe, 8) < n) {
        PyErr_SetString(PyExc_ValueError, "at_least_sorted: arrays of unequal length");
        goto done;
    }
    Events ev = {signed_keys ? 0 : (packed ? 2 : 1), k.view.buf, signed_keys ? NULL : d.view.buf, tb, ib,
                 signed_keys ? 0 : count_of(&d, 8)};
    const int64_t *th = thr.view.buf;
    int64_t *uu = ou.view.buf, *ss = os_.view.buf, *ee = oe.view.buf;
    Py_ssize_t m = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t level = 0;
    int open = 0;
    int64_t cu = 0, cs = 0, ce = 0;
    int64_t key, u, t0, delta, next = 0, nu = 0, t1 = 0, nd_;
    if (n > 0 && !event(&ev, 0, &next, &nu, &t1, &nd_))
        bad = 2;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        key = next;
        u = nu;
        t0 = t1;
        delta = nd_;
        if (__builtin_add_overflow(level, delta, &level)) {
            bad = 3;
            break;
        }
        if (i + 1 == n)
            break;
        if (!event(&ev, i + 1, &next, &nu, &t1, &nd_)) {
            bad = 2;
            break;
        }
        if (next == key)
            continue;                       /* not this key's last event */
        if (nu != u)
            continue;                       /* the unit's last key: no stretch after it */
        if (u < 0 || u >= nt) {
            bad = 1;
            break;
        }
        if (level < th[u])
            continue;
        if (open && cu == u && ce >= t0) {
            if (t1 > ce)
                ce = t1;
        } else {
            if (open) {
                uu[m] = cu; ss[m] = cs; ee[m] = ce; m++;
            }
            open = 1;
            cu = u; cs = t0; ce = t1;
        }
    }
    if (open && !bad) {
        uu[m] = cu; ss[m] = cs; ee[m] = ce; m++;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(bad == 1 ? PyExc_IndexError : PyExc_ValueError,
                        bad == 1 ? "at_least_sorted: a unit has no threshold"
                        : bad == 2 ? "at_least_sorted: a packed position past the deltas"
                                   : "at_least_sorted: the level overflows 64 bits");
        goto done;
    }
    result = PyLong_FromSsize_t(m);
done:
    release(&k);
    release(&d);
    release(&thr);
    release(&ou);
    release(&os_);
    release(&oe);
    return result;
}

/* --- per unit ---------------------------------------------------------------------------------
 *
 * seconds_per_unit(unit, start, end, lo, hi, out) -> bool
 *
 * out[u] += the length of [start, end) inside [lo, hi) (0 when it misses it), for every
 * interval of unit u. False (out untouched past what was added: the caller starts again in
 * numpy) when a unit is outside out's range, which numpy's bincount answers its own way.
 * numpy: calculators.intervals._seconds_in.
 *
 * or_per_unit(unit, bits, mask, out) -> bool
 *
 * out[u] |= bits[i] & mask for every i with unit u; False, as above, for a unit outside out.
 * numpy: calculators.engine._flag_bits.
 *
 * select_overlapping(start, end, lo, hi, columns, outputs) -> count
 *
 * The rows i with min(end[i], hi) > max(start[i], lo), in order: each column's values at
 * those rows into its output (the outputs at least as long as the columns). numpy: a mask and
 * one gather a column (calculators.engine._attribution).
 */
static PyObject *seconds_per_unit(PyObject *self, PyObject *args) {
    PyObject *o_u, *o_s, *o_e, *o_out;
    long long lo, hi;
    if (!PyArg_ParseTuple(args, "OOOLLO", &o_u, &o_s, &o_e, &lo, &hi, &o_out))
        return NULL;
    Buf u = {0}, s = {0}, e = {0}, out = {0};
    PyObject *result = NULL;
    if (get_buf(o_u, &u, 8, 0, "unit") < 0)
        return NULL;
    if (get_buf(o_s, &s, 8, 0, "start") < 0 || get_buf(o_e, &e, 8, 0, "end") < 0 ||
        get_buf(o_out, &out, 8, 1, "out") < 0)
        goto done;
    Py_ssize_t n = count_of(&u, 8), nu = count_of(&out, 8);
    if (count_of(&s, 8) != n || count_of(&e, 8) != n) {
        PyErr_SetString(PyExc_ValueError, "seconds_per_unit: arrays of unequal length");
        goto done;
    }
    const int64_t *uu = u.view.buf, *ss = s.view.buf, *ee = e.view.buf;
    int64_t *o = out.view.buf;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = ss[i] > lo ? ss[i] : lo, b = ee[i] < hi ? ee[i] : hi;
        if (uu[i] < 0 || uu[i] >= nu) {
            ok = 0;
            break;
        }
        int64_t len_, sum;
        if (b > a) {
            if (__builtin_sub_overflow(b, a, &len_) || __builtin_add_overflow(o[uu[i]], len_, &sum)) {
                ok = 0;            /* beyond 64 bits: numpy's float sums answer */
                break;
            }
            o[uu[i]] = sum;
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(ok ? Py_True : Py_False);
done:
    release(&u);
    release(&s);
    release(&e);
    release(&out);
    return result;
}

static PyObject *or_per_unit(PyObject *self, PyObject *args) {
    PyObject *o_u, *o_b, *o_out;
    long long mask;
    if (!PyArg_ParseTuple(args, "OOLO", &o_u, &o_b, &mask, &o_out))
        return NULL;
    Buf u = {0}, b = {0}, out = {0};
    PyObject *result = NULL;
    if (get_buf(o_u, &u, 8, 0, "unit") < 0)
        return NULL;
    if (get_buf(o_b, &b, 8, 0, "bits") < 0 || get_buf(o_out, &out, 8, 1, "out") < 0)
        goto done;
    Py_ssize_t n = count_of(&u, 8), nu = count_of(&out, 8);
    if (count_of(&b, 8) != n) {
        PyErr_SetString(PyExc_ValueError, "or_per_unit: arrays of unequal length");
        goto done;
    }
    const int64_t *uu = u.view.buf, *bb = b.view.buf;
    int64_t *o = out.view.buf;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t v = bb[i] & mask;
        if (!v)
            continue;
        if (uu[i] < 0 || uu[i] >= nu) {
            ok = 0;
            break;
        }
        o[uu[i]] |= v;
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(ok ? Py_True : Py_False);
done:
    release(&u);
    release(&b);
    release(&out);
    return result;
}

#define MAX_COLUMNS 8

static PyObject *select_overlapping(PyObject *self, PyObject *args) {
    PyObject *o_s, *o_e, *cols, *outs;
    long long lo, hi;
    if (!PyArg_ParseTuple(args, "OOLLO!O!", &o_s, &o_e, &lo, &hi, &PyTuple_Type, &cols, &PyTuple_Type, &outs))
        return NULL;
    Py_ssize_t nc = PyTuple_GET_SIZE(cols);
    if (nc != PyTuple_GET_SIZE(outs) || nc > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "select_overlapping: one output a column, at most 8");
        return NULL;
    }
    Buf s = {0}, e = {0}, cb[MAX_COLUMNS], ob[MAX_COLUMNS];
    memset(cb, 0, sizeof cb);
    memset(ob, 0, sizeof ob);
    PyObject *result = NULL;
    if (get_buf(o_s, &s, 8, 0, "start") < 0)
        return NULL;
    if (get_buf(o_e, &e, 8, 0, "end") < 0)
        goto done;
    Py_ssize_t n = count_of(&s, 8);
    if (count_of(&e, 8) != n) {
        PyErr_SetString(PyExc_ValueError, "select_overlapping: arrays of unequal length");
        goto done;
    }
    for (Py_ssize_t c = 0; c < nc; c++) {
        if (get_buf(PyTuple_GET_ITEM(cols, c), &cb[c], 8, 0, "column") < 0 ||
            get_buf(PyTuple_GET_ITEM(outs, c), &ob[c], 8, 1, "output") < 0)
            goto done;
        if (count_of(&cb[c], 8) != n || count_of(&ob[c], 8) < n) {
            PyErr_SetString(PyExc_ValueError, "select_overlapping: a column or output of another length");
            goto done;
        }
    }
    const int64_t *ss = s.view.buf, *ee = e.view.buf;
    const int64_t *in[MAX_COLUMNS];
    int64_t *to[MAX_COLUMNS];
    for (Py_ssize_t c = 0; c < nc; c++) {
        in[c] = cb[c].view.buf;
        to[c] = ob[c].view.buf;
    }
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = ss[i] > lo ? ss[i] : lo, b = ee[i] < hi ? ee[i] : hi;
        if (b <= a)
            continue;
        for (Py_ssize_t c = 0; c < nc; c++)
            to[c][m] = in[c][i];
        m++;
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(m);
done:
    release(&s);
    release(&e);
    for (int c = 0; c < MAX_COLUMNS; c++) {
        release(&cb[c]);
        release(&ob[c]);
    }
    return result;
}

/* --- id lists ---------------------------------------------------------------------------------
 *
 * join_strings(offsets, data, width, codes, sep, positions) -> bytearray
 *
 * The cells codes[0], codes[1], ... of an Arrow string array (offsets and data as for
 * iso_seconds, offsets advanced to the array's offset; len(offsets) / width - 1 cells), each
 * followed by sep, in one new buffer; positions[i] (len(codes) + 1 int64) is where cell i's text
 * begins, and positions[len(codes)] the buffer's length. What an Arrow take of the cells each
 * joined with sep gives as its data and offsets (calculators.result_json._incident_text).
 */
static int cell_bounds(const unsigned char *ob, int width, int64_t c, int64_t *lo, int64_t *hi) {
    if (width == 4) {
        int32_t a, b;
        memcpy(&a, ob + c * 4, 4);
        memcpy(&b, ob + (c + 1) * 4, 4);
        *lo = a;
        *hi = b;
    } else {
        memcpy(lo, ob + c * 8, 8);
        memcpy(hi, ob + (c + 1) * 8, 8);
    }
    return 0;
}

#define PREFETCH 32      /* cells read ahead of the copy: the codes jump across the whole table */

static PyObject *join_strings(PyObject *self, PyObject *args) {
    PyObject *o_off, *o_data, *o_codes, *o_pos;
    int width;
    Py_buffer sep;
    if (!PyArg_ParseTuple(args, "OOiOy*O", &o_off, &o_data, &width, &o_codes, &sep, &o_pos))
        return NULL;
    Buf off = {0}, data = {0}, codes = {0}, pos = {0};
    PyObject *result = NULL, *out = NULL;
    if (width != 4 && width != 8) {
        PyErr_SetString(PyExc_ValueError, "join_strings: width is 4 or 8");
        goto done;
    }
    if (get_buf(o_off, &off, 1, 0, "offsets") < 0 || get_buf(o_data, &data, 1, 0, "data") < 0 ||
        get_buf(o_codes, &codes, 8, 0, "codes") < 0 || get_buf(o_pos, &pos, 8, 1, "positions") < 0)
        goto done;
    Py_ssize_t cells = off.view.len / width - 1, n = count_of(&codes, 8);
    if (cells < 0 || count_of(&pos, 8) != n + 1) {
        PyErr_SetString(PyExc_ValueError, "join_strings: no offsets, or positions not one more than the codes");
        goto done;
    }
    const unsigned char *ob = off.view.buf, *base = data.view.buf;
    const int64_t *cc = codes.view.buf;
    int64_t *pp = pos.view.buf;
    Py_ssize_t dlen = data.view.len, slen = sep.len;
    int64_t total = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t c = cc[i], lo, hi;
        if (c < 0 || c >= cells) {
            bad = 1;
            break;
        }
        if (i + PREFETCH < n) {          /* the ids are read in no order (read once: it may change) */
            int64_t a = cc[i + PREFETCH];
            if (a >= 0 && a < cells)
                __builtin_prefetch(ob + a * width);
        }
        cell_bounds(ob, width, c, &lo, &hi);
        if (lo < 0 || hi < lo || hi > dlen) {
            bad = 2;
            break;
        }
        pp[i] = total;
        if ((hi - lo) > PY_SSIZE_T_MAX - slen || total > PY_SSIZE_T_MAX - ((hi - lo) + slen)) {
            bad = 4;
            break;
        }
        total += (hi - lo) + slen;
    }
    if (!bad)
        pp[n] = total;
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(bad == 1 ? PyExc_IndexError : bad == 4 ? PyExc_OverflowError : PyExc_ValueError,
                        bad == 1 ? "join_strings: a code is out of range"
                        : bad == 4 ? "join_strings: the text would be too long"
                                   : "join_strings: an offset points outside the data");
        goto done;
    }
    out = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out == NULL)
        goto done;
    char *dst = PyByteArray_AS_STRING(out);
    const char *sp = sep.buf;
    char sep8[8] = {0};
    if (slen <= 8)
        memcpy(sep8, sp, (size_t)slen);
    Py_BEGIN_ALLOW_THREADS
    /* every bound checked again, against the buffer made: the codes, offsets or positions may
     * share memory with each other (or be changed by another thread) since the first pass */
    int64_t w = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t c = cc[i], lo, hi;
        if (c < 0 || c >= cells) {
            bad = 1;
            break;
        }
        if (i + PREFETCH < n) {
            /* the cell PREFETCH ahead: its bounds (fetched a pass ago, or ahead below) and text */
            int64_t a = cc[i + PREFETCH], plo, phi;
            if (a >= 0 && a < cells) {
                cell_bounds(ob, width, a, &plo, &phi);
                if (plo >= 0 && plo < dlen)
                    __builtin_prefetch(base + plo);
            }
            if (i + 2 * PREFETCH < n) {
                int64_t b = cc[i + 2 * PREFETCH];
                if (b >= 0 && b < cells)
                    __builtin_prefetch(ob + b * width);
            }
        }
        cell_bounds(ob, width, c, &lo, &hi);
        if (lo < 0 || hi < lo || hi > dlen || hi - lo > total - w || slen > total - w - (hi - lo)) {
            bad = 3;
            break;
        }
        /* short cells and separators are copied 16 and 8 bytes at a time where the buffers have
         * room: the bytes past their end are written over by what follows */
        if (hi - lo <= 16 && lo + 16 <= dlen && 16 <= total - w)
            memcpy(dst + w, base + lo, 16);
        else
            memcpy(dst + w, base + lo, (size_t)(hi - lo));
        w += hi - lo;
        if (slen <= 8 && 8 <= total - w)
            memcpy(dst + w, sep8, 8);
        else
            memcpy(dst + w, sp, (size_t)slen);
        w += slen;
    }
    if (!bad && w != total)
        bad = 3;
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "join_strings: the codes or offsets changed between the passes");
        goto done;
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(out);
    PyBuffer_Release(&sep);
    release(&off);
    release(&data);
    release(&codes);
    release(&pos);
    return result;
}

/* --- id lists of a unit and its parents --------------------------------------------------------
 *
 * merge_lists(own_bounds, own_codes, owners, parent_bounds, parent_codes, out_bounds, out_codes) -> int
 *
 * Lists of codes in CSR form: unit u's are codes[bounds[u]:bounds[u + 1]], ascending, no code
 * twice. For each of the n units (len(own_bounds) - 1), its own list merged with the list of
 * its parent unit in each parent table k (owners[k][u]; -1: none): ascending, each code once,
 * into out_codes from out_bounds[u]; returns the count written (out_bounds[n]). numpy
 * (calculators.engine.IdIndex, `_unique_pairs`): the (unit, code) pairs of the unit's own rows
 * and of its parents' pairs expanded to their children, sorted and made distinct. A list that
 * is not strictly ascending, a bound or owner out of range, or an output too small is an error
 * (ValueError), found before anything is written past.
 */
#define MAX_PARENTS 4

static int csr_ok(const int64_t *b, Py_ssize_t n, Py_ssize_t len) {
    if (b[0] < 0)
        return 0;
    for (Py_ssize_t u = 0; u < n; u++)
        if (b[u + 1] < b[u])
            return 0;
    return b[n] <= len;
}

static PyObject *merge_lists(PyObject *self, PyObject *args) {
    PyObject *o_ob, *o_oc, *owners, *pbounds, *pcodes, *o_bout, *o_cout;
    if (!PyArg_ParseTuple(args, "OOO!O!O!OO", &o_ob, &o_oc, &PyTuple_Type, &owners, &PyTuple_Type, &pbounds,
                          &PyTuple_Type, &pcodes, &o_bout, &o_cout))
        return NULL;
    Py_ssize_t np_ = PyTuple_GET_SIZE(owners);
    if (np_ > MAX_PARENTS || PyTuple_GET_SIZE(pbounds) != np_ || PyTuple_GET_SIZE(pcodes) != np_) {
        PyErr_SetString(PyExc_ValueError, "merge_lists: at most 4 parent tables, each with owners, bounds and codes");
        return NULL;
    }
    /* the unit's own list and the output (fx), and per parent table its owners, bounds and codes */
    Buf fx[4], ow[MAX_PARENTS], pb[MAX_PARENTS], pc[MAX_PARENTS];
    memset(fx, 0, sizeof fx);
    memset(ow, 0, sizeof ow);
    memset(pb, 0, sizeof pb);
    memset(pc, 0, sizeof pc);
    Buf *ob = &fx[0], *oc = &fx[1], *bo = &fx[2], *co = &fx[3];
    PyObject *result = NULL;
    if (get_buf(o_ob, ob, 8, 0, "own_bounds") < 0 || get_buf(o_oc, oc, 8, 0, "own_codes") < 0 ||
        get_buf(o_bout, bo, 8, 1, "out_bounds") < 0 || get_buf(o_cout, co, 8, 1, "out_codes") < 0)
        goto done;
    Py_ssize_t n = count_of(ob, 8) - 1, cap = count_of(co, 8);
    if (n < 0 || count_of(bo, 8) != n + 1 || !csr_ok(ob->view.buf, n, count_of(oc, 8))) {
        PyErr_SetString(PyExc_ValueError, "merge_lists: own bounds not n + 1 ascending positions in the codes, "
                                          "or out_bounds not n + 1 long");
        goto done;
    }
    const int64_t *own_b = ob->view.buf, *own_c = oc->view.buf, *own_of[MAX_PARENTS], *par_b[MAX_PARENTS],
                  *par_c[MAX_PARENTS];
    Py_ssize_t par_n[MAX_PARENTS];
    for (Py_ssize_t k = 0; k < np_; k++) {
        if (get_buf(PyTuple_GET_ITEM(owners, k), &ow[k], 8, 0, "owners") < 0 ||
            get_buf(PyTuple_GET_ITEM(pbounds, k), &pb[k], 8, 0, "parent_bounds") < 0 ||
            get_buf(PyTuple_GET_ITEM(pcodes, k), &pc[k], 8, 0, "parent_codes") < 0)
            goto done;
        par_n[k] = count_of(&pb[k], 8) - 1;
        if (count_of(&ow[k], 8) != n || par_n[k] < 0 || !csr_ok(pb[k].view.buf, par_n[k], count_of(&pc[k], 8))) {
            PyErr_SetString(PyExc_ValueError, "merge_lists: owners not one per unit, or parent bounds not "
                                              "ascending positions in the parent codes");
            goto done;
        }
        own_of[k] = ow[k].view.buf;
        par_b[k] = pb[k].view.buf;
        par_c[k] = pc[k].view.buf;
    }
    int64_t *out_b = bo->view.buf, *out_c = co->view.buf;
    Py_ssize_t w = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t u = 0; u < n && !bad; u++) {
        /* the unit's lists: [at[j], end[j]) of src[j] */
        const int64_t *src[MAX_PARENTS + 1];
        int64_t at[MAX_PARENTS + 1], end[MAX_PARENTS + 1];
        int m = 0;
        src[m] = own_c;
        at[m] = own_b[u];
        end[m] = own_b[u + 1];
        if (at[m] > end[m] || end[m] > own_b[n]) {     /* (the bounds may have changed since checked) */
            bad = 1;
            break;
        }
        m++;
        for (Py_ssize_t k = 0; k < np_; k++) {
            int64_t p = own_of[k][u];
            if (p < 0)
                continue;
            if (p >= par_n[k] || par_b[k][p] < 0 || par_b[k][p] > par_b[k][p + 1] ||
                par_b[k][p + 1] > par_b[k][par_n[k]]) {
                bad = 1;
                break;
            }
            src[m] = par_c[k];
            at[m] = par_b[k][p];
            end[m] = par_b[k][p + 1];
            m++;
        }
        if (bad)
            break;
        out_b[u] = w;
        int64_t last = INT64_MIN;
        int first = 1;
        for (;;) {
            int pick = -1;
            int64_t v = 0;
            for (int j = 0; j < m; j++)
                if (at[j] < end[j] && (pick < 0 || src[j][at[j]] < v)) {
                    pick = j;
                    v = src[j][at[j]];
                }
            if (pick < 0)
                break;
            for (int j = 0; j < m; j++)          /* the code taken leaves every list that holds it */
                if (at[j] < end[j] && src[j][at[j]] == v)
                    at[j]++;
            if (!first && v <= last) {           /* a list not ascending */
                bad = 2;
                break;
            }
            if (w >= cap) {
                bad = 3;
                break;
            }
            out_c[w++] = v;
            last = v;
            first = 0;
        }
    }
    if (!bad)
        out_b[n] = w;
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, bad == 1 ? "merge_lists: an owner or bound out of range"
                                          : bad == 2 ? "merge_lists: a list is not strictly ascending"
                                                     : "merge_lists: out_codes is too small");
        goto done;
    }
    result = PyLong_FromSsize_t(w);
done:
    release_all(fx, 4);
    release_all(ow, MAX_PARENTS);
    release_all(pb, MAX_PARENTS);
    release_all(pc, MAX_PARENTS);
    return result;
}

/* --- blocks a piece touches -------------------------------------------------------------------
 *
 * touched_blocks(parent, start, end, bounds, block_start, block_end, lo, hi)
 *
 * For each piece i on unit parent[i] (a rack), the blocks of that unit it overlaps or touches:
 * [lo[i], hi[i]), where the blocks are sorted by (unit, start), disjoint per unit, and unit u's
 * blocks are bounds[u] .. bounds[u + 1]. numpy (calculators.engine._lift):
 * lo = searchsorted(key(block_unit, block_end), key(parent, start), "left"),
 * hi = searchsorted(key(block_unit, block_start), key(parent, end), "right"). A piece of the
 * same unit as the one before it, starting no earlier, goes on from that one's lo (pieces
 * sorted by start walk their unit's blocks once); any other starts at its unit's first block.
 */
static PyObject *touched_blocks(PyObject *self, PyObject *args) {
    Buf b[8];
    static const char *const names[8] = {"parent", "start", "end", "bounds", "block_start", "block_end", "lo", "hi"};
    if (take_bufs(args, 8, b, names, 6, __func__) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = count_of(&b[0], 8), nu = count_of(&b[3], 8) - 1, nb = count_of(&b[4], 8);
    if (count_of(&b[1], 8) != n || count_of(&b[2], 8) != n || count_of(&b[5], 8) != nb || count_of(&b[6], 8) != n ||
        count_of(&b[7], 8) != n || nu < 0) {
        PyErr_SetString(PyExc_ValueError, "touched_blocks: arrays of unequal length");
        goto done;
    }
    const int64_t *par = b[0].view.buf, *ps = b[1].view.buf, *pe = b[2].view.buf, *bounds = b[3].view.buf;
    const int64_t *bs = b[4].view.buf, *be = b[5].view.buf;
    int64_t *lo = b[6].view.buf, *hi = b[7].view.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t u = 0; u <= nu; u++) {
        if (bounds[u] < 0 || bounds[u] > nb || (u > 0 && bounds[u] < bounds[u - 1])) {
            bad = 1;
            break;
        }
    }
    int64_t prev_u = -1, prev_s = 0, j = 0;
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t u = par[i];
        if (u < 0 || u >= nu) {
            bad = 2;
            break;
        }
        int64_t end = bounds[u + 1];
        if (u != prev_u || ps[i] < prev_s)
            j = bounds[u];
        while (j < end && be[j] < ps[i])
            j++;
        int64_t h = j;
        while (h < end && bs[h] <= pe[i])
            h++;
        lo[i] = j;
        hi[i] = h;
        prev_u = u;
        prev_s = ps[i];
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(bad == 1 ? PyExc_ValueError : PyExc_IndexError,
                        bad == 1 ? "touched_blocks: bounds out of order or past the blocks"
                                 : "touched_blocks: a piece's unit has no bounds");
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    release_all(b, 8);
    return result;
}

/* --- node outages less their rack's long blocks -----------------------------------------------
 *
 * outside_counts(order, block, lo, hi, before, long, first, count) -> total or -1
 *
 * The merged outages g = 0, 1, ... of a merge (order and block as
 * calculators.intervals.merge_labels returns them: block non-decreasing along order, each g
 * present), their pieces' touched blocks [lo, hi) (by piece), `before` the number of long blocks
 * before each block (one more item than blocks). For each outage g with long[g] != 0: the first
 * long block inside it (first[g]) and how many (count[g]); returns the number of pieces the
 * fill will write at most (the count plus one, summed), or -1 where block is not as a merge
 * returns it (the caller then works in numpy). numpy: calculators.engine._outside_long_blocks.
 *
 * outside_fill(long, first, count, unit, start, end, lb_start, lb_end, out_unit, out_start,
 *              out_end) -> written
 *
 * Each kept outage less its long blocks: the gaps before, between and after them that are not
 * empty, in order.
 */
static PyObject *outside_counts(PyObject *self, PyObject *args) {
    Buf b[8];
    static const char *const names[8] = {"order", "block", "lo", "hi", "before", "long", "first", "count"};
    if (take_bufs(args, 8, b, names, 6, __func__) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = count_of(&b[0], 8), np_ = count_of(&b[2], 8), nb = count_of(&b[4], 8) - 1;
    Py_ssize_t ng = count_of(&b[5], 8);
    if (count_of(&b[1], 8) != n || count_of(&b[3], 8) != np_ || nb < 0 || count_of(&b[6], 8) != ng ||
        count_of(&b[7], 8) != ng) {
        PyErr_SetString(PyExc_ValueError, "outside_counts: arrays of unequal length");
        goto done;
    }
    const int64_t *order = b[0].view.buf, *block = b[1].view.buf, *lo = b[2].view.buf, *hi = b[3].view.buf;
    const int64_t *before = b[4].view.buf, *lng = b[5].view.buf;
    int64_t *first = b[6].view.buf, *count = b[7].view.buf;
    int64_t total = 0;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t k = 0;
    for (Py_ssize_t g = 0; g < ng && ok; g++) {
        int64_t b_lo = nb, b_hi = 0;
        if (k >= n || block[k] != g) {
            ok = 0;
            break;
        }
        for (; k < n && block[k] == g; k++) {
            int64_t p = order[k];
            if (p < 0 || p >= np_) {
                ok = 0;
                break;
            }
            if (hi[p] > lo[p]) {
                if (lo[p] < 0 || hi[p] > nb) {
                    ok = 0;
                    break;
                }
                if (lo[p] < b_lo)
                    b_lo = lo[p];
                if (hi[p] > b_hi)
                    b_hi = hi[p];
            }
        }
        if (!ok || !lng[g])
            continue;
        int64_t a = before[b_lo < nb ? b_lo : nb];
        int64_t c = b_hi > b_lo ? before[b_hi] - a : 0;
        if (c < 0) {
            ok = 0;
            break;
        }
        first[g] = a;
        count[g] = c;
        total += c + 1;
    }
    if (ok && k != n)
        ok = 0;
    Py_END_ALLOW_THREADS
    result = PyLong_FromLongLong(ok ? total : -1);
done:
    release_all(b, 8);
    return result;
}

static PyObject *outside_fill(PyObject *self, PyObject *args) {
    Buf b[11];
    static const char *const names[11] = {"long", "first", "count", "unit", "start", "end", "lb_start", "lb_end",
                                    "out_unit", "out_start", "out_end"};
    if (take_bufs(args, 11, b, names, 8, __func__) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t ng = count_of(&b[0], 8), nl = count_of(&b[6], 8), cap = count_of(&b[8], 8);
    if (count_of(&b[1], 8) != ng || count_of(&b[2], 8) != ng || count_of(&b[3], 8) != ng ||
        count_of(&b[4], 8) != ng || count_of(&b[5], 8) != ng || count_of(&b[7], 8) != nl ||
        count_of(&b[9], 8) != cap || count_of(&b[10], 8) != cap) {
        PyErr_SetString(PyExc_ValueError, "outside_fill: arrays of unequal length");
        goto done;
    }
    const int64_t *lng = b[0].view.buf, *first = b[1].view.buf, *count = b[2].view.buf, *mu = b[3].view.buf;
    const int64_t *ms = b[4].view.buf, *me = b[5].view.buf, *ls = b[6].view.buf, *le = b[7].view.buf;
    int64_t *ou = b[8].view.buf, *os_ = b[9].view.buf, *oe = b[10].view.buf;
    Py_ssize_t m = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t g = 0; g < ng && !bad; g++) {
        if (!lng[g])
            continue;
        int64_t a = first[g], c = count[g];
        if (a < 0 || c < 0 || a + c > nl) {
            bad = 1;
            break;
        }
        for (int64_t i = 0; i <= c; i++) {
            int64_t s0 = i == 0 ? ms[g] : le[a + i - 1];
            int64_t e0 = i == c ? me[g] : ls[a + i];
            if (e0 <= s0)
                continue;
            if (m >= cap) {
                bad = 1;
                break;
            }
            ou[m] = mu[g];
            os_[m] = s0;
            oe[m] = e0;
            m++;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "outside_fill: blocks or outputs too short for the counts");
        goto done;
    }
    result = PyLong_FromSsize_t(m);
done:
    release_all(b, 11);
    return result;
}

/* --- time outside the parent's ----------------------------------------------------------------
 *
 * minus_parent_sorted(child, start, end, owner, bounds, p_start, p_end, out_child, out_start,
 *                     out_end) -> count or -1
 *
 * Per child interval (sorted by child and start, positive, disjoint per child), the parts not
 * covered by its parent's intervals (parent u = owner[child]: p_start/p_end[bounds[u] ..
 * bounds[u + 1]], sorted and disjoint); the parts, sorted by child and start, go to the outputs
 * (None: only counted) and their count is returned. -1 where the child intervals are not sorted
 * or not positive, or a child has no parent: the caller then works in numpy
 * (calculators.intervals._minus_parent, the definition).
 */
static PyObject *minus_parent_sorted(PyObject *self, PyObject *args) {
    PyObject *objs[10];
    Buf b[10];
    memset(b, 0, sizeof b);
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &objs[6],
                          &objs[7], &objs[8], &objs[9]))
        return NULL;
    int fill = objs[7] != Py_None;
    static const char *names[10] = {"child", "start", "end", "owner", "bounds", "p_start", "p_end",
                                    "out_child", "out_start", "out_end"};
    for (int i = 0; i < (fill ? 10 : 7); i++) {
        if (get_buf(objs[i], &b[i], 8, i >= 7, names[i]) < 0) {
            for (int j = 0; j < i; j++)
                release(&b[j]);
            return NULL;
        }
    }
    PyObject *result = NULL;
    Py_ssize_t n = count_of(&b[0], 8), nc = count_of(&b[3], 8), nu = count_of(&b[4], 8) - 1;
    Py_ssize_t np_ = count_of(&b[5], 8), cap = fill ? count_of(&b[7], 8) : 0;
    if (count_of(&b[1], 8) != n || count_of(&b[2], 8) != n || nu < 0 || count_of(&b[6], 8) != np_ ||
        (fill && (count_of(&b[8], 8) != cap || count_of(&b[9], 8) != cap))) {
        PyErr_SetString(PyExc_ValueError, "minus_parent_sorted: arrays of unequal length");
        goto done;
    }
    const int64_t *ch = b[0].view.buf, *cs = b[1].view.buf, *ce = b[2].view.buf, *own = b[3].view.buf;
    const int64_t *bounds = b[4].view.buf, *ps = b[5].view.buf, *pe = b[6].view.buf;
    int64_t *oc = fill ? b[7].view.buf : NULL, *os_ = fill ? b[8].view.buf : NULL, *oe = fill ? b[9].view.buf : NULL;
    Py_ssize_t m = 0;
    int ok = 1, full = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t u = 0; u <= nu && ok; u++)
        if (bounds[u] < 0 || bounds[u] > np_ || (u > 0 && bounds[u] < bounds[u - 1]))
            ok = 0;
    int64_t prev_c = -1, prev_e = 0, j = 0;
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        int64_t c = ch[i], s0 = cs[i], e0 = ce[i];
        if (c < 0 || c >= nc || e0 <= s0 || c < prev_c || (c == prev_c && s0 < prev_e)) {
            ok = 0;
            break;
        }
        int64_t u = own[c];
        if (u < 0 || u >= nu) {
            ok = 0;
            break;
        }
        int64_t stop = bounds[u + 1];
        if (c != prev_c)
            j = bounds[u];
        while (j < stop && pe[j] <= s0)
            j++;
        int64_t cur = s0;
        for (int64_t h = j; h < stop && ps[h] < e0; h++) {
            if (ps[h] > cur) {
                if (fill) {
                    if (m >= cap) { full = 1; ok = 0; break; }
                    oc[m] = c; os_[m] = cur; oe[m] = ps[h];
                }
                m++;
            }
            if (pe[h] > cur)
                cur = pe[h];
        }
        if (!ok)
            break;
        if (e0 > cur) {
            if (fill) {
                if (m >= cap) { full = 1; ok = 0; break; }
                oc[m] = c; os_[m] = cur; oe[m] = e0;
            }
            m++;
        }
        prev_c = c;
        prev_e = e0;
    }
    Py_END_ALLOW_THREADS
    if (full) {
        PyErr_SetString(PyExc_ValueError, "minus_parent_sorted: outputs shorter than the parts");
        goto done;
    }
    result = PyLong_FromSsize_t(ok ? m : -1);
done:
    release_all(b, 10);
    return result;
}

/* --- merging ----------------------------------------------------------------------------------
 *
 * merge_walk(unit, start, end, order, block, out_unit, out_start, out_end) -> count
 *
 * The intervals order[0], order[1], ... (sorted by unit and start, all positive) merged where
 * they overlap or touch: block[k] is the merged interval that order[k] belongs to, and the
 * merged intervals go to the outputs (at least as long as order). numpy: the pass after the
 * sort in calculators.intervals.merge_labels (a running maximum of the end keys; a start key
 * above it opens a new interval).
 */
static PyObject *merge_walk(PyObject *self, PyObject *args) {
    Buf b[8];
    static const char *const names[8] = {"unit", "start", "end", "order", "block", "out_unit", "out_start", "out_end"};
    if (take_bufs(args, 8, b, names, 4, __func__) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = count_of(&b[0], 8), nk = count_of(&b[3], 8);
    if (count_of(&b[1], 8) != n || count_of(&b[2], 8) != n || count_of(&b[4], 8) != nk || count_of(&b[5], 8) < nk ||
        count_of(&b[6], 8) < nk || count_of(&b[7], 8) < nk) {
        PyErr_SetString(PyExc_ValueError, "merge_walk: arrays of unequal length");
        goto done;
    }
    const int64_t *uu = b[0].view.buf, *ss = b[1].view.buf, *ee = b[2].view.buf, *order = b[3].view.buf;
    int64_t *block = b[4].view.buf, *ou = b[5].view.buf, *os_ = b[6].view.buf, *oe = b[7].view.buf;
    const int64_t mask = ((int64_t)1 << SHIFT) - 1;
    Py_ssize_t m = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    int64_t first = 0, run = 0;
    for (Py_ssize_t k = 0; k < nk; k++) {
        int64_t i = order[k];
        if (i < 0 || i >= n) {
            bad = 1;
            break;
        }
        int64_t ks = KEY(uu[i], ss[i]), ke = KEY(uu[i], ee[i]);
        if (k == 0 || ks > run) {
            if (k > 0) {
                ou[m] = first >> SHIFT; os_[m] = first & mask; oe[m] = run & mask; m++;
            }
            first = ks;
            run = ke;
        } else if (ke > run) {
            run = ke;
        }
        block[k] = m;
    }
    if (!bad && nk > 0) {
        ou[m] = first >> SHIFT; os_[m] = first & mask; oe[m] = run & mask; m++;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_IndexError, "merge_walk: an order entry is out of range");
        goto done;
    }
    result = PyLong_FromSsize_t(m);
done:
    release_all(b, 8);
    return result;
}

/* keys_sorted(unit, time) -> bool: whether the keys (unit << 33) | time never decrease, as
 * calculators.intervals.key makes them (stops at the first decrease: nearly free on unsorted
 * input). */
static PyObject *keys_sorted(PyObject *self, PyObject *args) {
    PyObject *o_u, *o_t;
    if (!PyArg_ParseTuple(args, "OO", &o_u, &o_t))
        return NULL;
    Buf u = {0}, t = {0};
    PyObject *result = NULL;
    if (get_buf(o_u, &u, 8, 0, "unit") < 0)
        return NULL;
    if (get_buf(o_t, &t, 8, 0, "time") < 0)
        goto done;
    Py_ssize_t n = count_of(&u, 8);
    if (count_of(&t, 8) != n) {
        PyErr_SetString(PyExc_ValueError, "keys_sorted: arrays of unequal length");
        goto done;
    }
    const int64_t *uu = u.view.buf, *tt = t.view.buf;
    int sorted = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 1; i < n; i++) {
        if (KEY(uu[i], tt[i]) < KEY(uu[i - 1], tt[i - 1])) {
            sorted = 0;
            break;
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(sorted ? Py_True : Py_False);
done:
    release(&u);
    release(&t);
    return result;
}

/* --- sorting 64-bit integers --------------------------------------------------------------------
 *
 * sort_i64(a, lo_bit) -> None
 *
 * Sorts the int64 array `a` in place, ascending: numpy's `a.sort()`, by a least-significant-digit
 * radix sort, which on the engine's keys (a few million values of 40 to 60 bits) takes a third to
 * a quarter of the time of numpy's comparison sort on the 2-core machines this was measured on
 * (benchmarks/bench_sort.py). A first walk finds the bits in which the values differ at all (the
 * or and the and of all of them, the sign bit flipped so that negative values sort first) and
 * whether they are in order already (then nothing is moved); only digits of those bits are sorted,
 * 11 bits or fewer each, a digit in which all values agree skipped.
 *
 * `lo_bit` > 0 says the bits below it need no sorting: among values equal above them they are in
 * ascending order already, as where the low bits hold each value's position (the packed keys of
 * calculators.intervals.sorted_packed). A radix sort is stable, so sorting the bits from `lo_bit`
 * up gives the same array as sorting them all. Scratch memory: one array as long as `a`.
 */
#define RADIX_MAX_BITS 11

static PyObject *sort_i64(PyObject *self, PyObject *args) {
    PyObject *o_a;
    int lo_bit;
    if (!PyArg_ParseTuple(args, "Oi", &o_a, &lo_bit))
        return NULL;
    if (lo_bit < 0 || lo_bit > 63) {
        PyErr_Format(PyExc_ValueError, "sort_i64: lo_bit must be 0 to 63, got %d", lo_bit);
        return NULL;
    }
    Buf a = {0};
    if (get_buf(o_a, &a, 8, 1, "a") < 0)
        return NULL;
    Py_ssize_t n = count_of(&a, 8);
    uint64_t *v = a.view.buf;
    uint64_t *tmp = NULL;
    size_t *counts = NULL;
    int oom = 0;
    const uint64_t flip = (uint64_t)1 << 63;
    Py_BEGIN_ALLOW_THREADS
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    int sorted = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t x = v[i] ^ flip;
        all_or |= x;
        all_and &= x;
        if (i && (int64_t)v[i] < (int64_t)v[i - 1])
            sorted = 0;
    }
    uint64_t differ = (all_or ^ all_and) & (~(uint64_t)0 << lo_bit);
    if (!sorted && differ) {
        int lo = __builtin_ctzll(differ), hi = 64 - __builtin_clzll(differ);
        int passes = (hi - lo + RADIX_MAX_BITS - 1) / RADIX_MAX_BITS;
        int width = (hi - lo + passes - 1) / passes;
        size_t buckets = (size_t)1 << width;
        tmp = malloc((size_t)n * sizeof(uint64_t));
        counts = calloc((size_t)passes * buckets, sizeof(size_t));
        if (!tmp || !counts) {
            oom = 1;
        } else {
            for (Py_ssize_t i = 0; i < n; i++) {
                uint64_t x = v[i] ^ flip;
                for (int p = 0; p < passes; p++)
                    counts[(size_t)p * buckets + ((x >> (lo + p * width)) & (buckets - 1))]++;
            }
            uint64_t *src = v, *dst = tmp;
            for (int p = 0; p < passes; p++) {
                size_t *c = counts + (size_t)p * buckets;
                int shift = lo + p * width;
                int trivial = 0;
                size_t sum = 0;
                for (size_t d = 0; d < buckets; d++) {
                    size_t k = c[d];
                    if (k == (size_t)n)
                        trivial = 1;
                    c[d] = sum;
                    sum += k;
                }
                if (trivial)
                    continue;        /* all values have the same digit here */
                for (Py_ssize_t i = 0; i < n; i++) {
                    uint64_t x = src[i];
                    dst[c[((x ^ flip) >> shift) & (buckets - 1)]++] = x;
                }
                uint64_t *t = src;
                src = dst;
                dst = t;
            }
            if (src != v)
                memcpy(v, src, (size_t)n * sizeof(uint64_t));
        }
        free(tmp);
        free(counts);
    }
    Py_END_ALLOW_THREADS
    release(&a);
    if (oom)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* --- rows by class ----------------------------------------------------------------------------
 *
 * split_rows(cls, columns, outputs) -> None
 *
 * Each column's values in row order into the output of the row's class: outputs holds
 * n_classes x len(columns) arrays (class by class), each exactly as long as its class has rows;
 * rows of a class outside 0 .. n_classes - 1 go nowhere. numpy: `column[cls == c]` for every
 * class and column (calculators.kernels.split).
 */
#define MAX_SPLIT 8

static PyObject *split_rows(PyObject *self, PyObject *args) {
    PyObject *o_cls, *cols, *outs;
    if (!PyArg_ParseTuple(args, "OO!O!", &o_cls, &PyTuple_Type, &cols, &PyTuple_Type, &outs))
        return NULL;
    Py_ssize_t nc = PyTuple_GET_SIZE(cols), no = PyTuple_GET_SIZE(outs);
    if (nc < 1 || nc > MAX_COLUMNS || no % nc != 0 || no / nc > MAX_SPLIT) {
        PyErr_SetString(PyExc_ValueError, "split_rows: 1 to 8 columns, and outputs a whole number of classes (at most 8)");
        return NULL;
    }
    Py_ssize_t ncls = no / nc;
    Buf cb = {0}, in[MAX_COLUMNS], ob[MAX_COLUMNS * MAX_SPLIT];
    memset(in, 0, sizeof in);
    memset(ob, 0, sizeof ob);
    PyObject *result = NULL;
    if (get_buf(o_cls, &cb, 8, 0, "cls") < 0)
        return NULL;
    Py_ssize_t n = count_of(&cb, 8);
    const int64_t *cls = cb.view.buf;
    Py_ssize_t counts[MAX_SPLIT];
    memset(counts, 0, sizeof counts);
    for (Py_ssize_t i = 0; i < n; i++)
        if (cls[i] >= 0 && cls[i] < ncls)
            counts[cls[i]]++;
    for (Py_ssize_t c = 0; c < nc; c++) {
        if (get_buf(PyTuple_GET_ITEM(cols, c), &in[c], 8, 0, "column") < 0)
            goto done;
        if (count_of(&in[c], 8) != n) {
            PyErr_SetString(PyExc_ValueError, "split_rows: a column of another length than cls");
            goto done;
        }
    }
    for (Py_ssize_t o = 0; o < no; o++) {
        if (get_buf(PyTuple_GET_ITEM(outs, o), &ob[o], 8, 1, "output") < 0)
            goto done;
        if (count_of(&ob[o], 8) != counts[o / nc]) {
            PyErr_SetString(PyExc_ValueError, "split_rows: an output not as long as its class");
            goto done;
        }
    }
    const int64_t *src[MAX_COLUMNS];
    int64_t *dst[MAX_COLUMNS * MAX_SPLIT];
    Py_ssize_t at[MAX_SPLIT];
    memset(at, 0, sizeof at);
    for (Py_ssize_t c = 0; c < nc; c++)
        src[c] = in[c].view.buf;
    for (Py_ssize_t o = 0; o < no; o++)
        dst[o] = ob[o].view.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t k = cls[i];
        if (k < 0 || k >= ncls || at[k] >= counts[k])      /* (cls may have changed since it was counted) */
            continue;
        Py_ssize_t j = at[k]++;
        for (Py_ssize_t c = 0; c < nc; c++)
            dst[k * nc + c][j] = src[c][i];
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    release(&cb);
    for (int c = 0; c < MAX_COLUMNS; c++)
        release(&in[c]);
    for (Py_ssize_t o = 0; o < MAX_COLUMNS * MAX_SPLIT; o++)
        release(&ob[o]);
    return result;
}

/* --- distinct strings -------------------------------------------------------------------------
 *
 * hash_cells(offsets, data, n, offset_width, out)
 *
 * A 64-bit hash of each of the n cells of an Arrow string array (offsets and data as for
 * iso_seconds) into out: cells whose hashes differ are different strings, so sorted hashes
 * without two equal ones prove every cell distinct (calculators.log_csv._distinct_as_written,
 * which sorts the cells themselves only when two hashes are equal).
 */
static uint64_t hash_bytes(const unsigned char *p, Py_ssize_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, (size_t)len);
    h = (h ^ w) * 0x94D049BB133111EBULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h;
}

/* plain_cells(offsets, data, n, offset_width) -> bool
 *
 * Whether every one of the n cells (as for hash_cells) is not empty and neither begins nor ends
 * with a character str.strip() removes (calculators.log_csv._WHITESPACE: the ASCII ones, U+0085,
 * U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, looked for in their
 * UTF-8 forms): such a column strips to itself with no empty cell, which
 * calculators.log_csv._distinct_as_written otherwise finds out with Arrow's utf8_trim (a copy
 * of every cell) and binary_length. Bytes that are not UTF-8 are not white space here, as
 * they are not to Arrow (whose string arrays hold UTF-8 only).
 */
static int ws_ascii(unsigned char c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
}

static int ws_multi(const unsigned char *p, Py_ssize_t avail) {
    /* the length of the white space character p starts with (its UTF-8 form), else 0 */
    if (avail >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0))
        return 2;
    if (avail >= 3) {
        if (p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80)
            return 3;                                           /* U+1680 */
        if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF)
            && p[2] >= 0x80)
            return 3;                                           /* U+2000-200A, 2028, 2029, 202F */
        if (p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F)
            return 3;                                           /* U+205F */
        if (p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80)
            return 3;                                           /* U+3000 */
    }
    return 0;
}

static int plain_cell(const unsigned char *p, Py_ssize_t len) {
    if (len == 0 || ws_ascii(p[0]) || ws_ascii(p[len - 1]))
        return 0;
    if (p[0] >= 0xC2 && ws_multi(p, len))
        return 0;
    /* a character ending the cell: its first byte is the last one that is not a continuation byte */
    if (p[len - 1] >= 0x80) {
        if (len >= 2 && ws_multi(p + len - 2, 2) == 2)
            return 0;
        if (len >= 3 && ws_multi(p + len - 3, 3) == 3)
            return 0;
    }
    return 1;
}

/* hash_cells and plain_cells: one walk over the cells, each hashed into out (CELLS_HASH) or
 * checked (CELLS_PLAIN: the walk stops at the first cell that is not plain) */
enum { CELLS_HASH, CELLS_PLAIN };

static PyObject *walk_cells(PyObject *args, int mode) {
    const char *name = mode == CELLS_HASH ? "hash_cells" : "plain_cells";
    PyObject *o_off, *o_data, *o_out = NULL;
    Py_ssize_t n;
    int width;
    if (mode == CELLS_HASH ? !PyArg_ParseTuple(args, "OOniO", &o_off, &o_data, &n, &width, &o_out)
                           : !PyArg_ParseTuple(args, "OOni", &o_off, &o_data, &n, &width))
        return NULL;
    if (width != 4 && width != 8) {
        PyErr_Format(PyExc_ValueError, "%s: offset_width is 4 or 8", name);
        return NULL;
    }
    Buf off = {0}, data = {0}, out = {0};
    PyObject *result = NULL;
    if (get_buf(o_off, &off, 1, 0, "offsets") < 0)
        return NULL;
    if (get_buf(o_data, &data, 1, 0, "data") < 0 || (o_out != NULL && get_buf(o_out, &out, 8, 1, "out") < 0))
        goto done;
    if (n < 0 || n > off.view.len / width - 1 || (o_out != NULL && count_of(&out, 8) != n)) {
        PyErr_Format(PyExc_ValueError, "%s: offsets%s do not hold n cells", name, o_out != NULL ? " or out" : "");
        goto done;
    }
    const unsigned char *base = data.view.buf, *ob = off.view.buf;
    Py_ssize_t dlen = data.view.len;
    int64_t *res = out.view.buf;
    int bad = 0, plain = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t lo, hi;
        cell_bounds(ob, width, i, &lo, &hi);
        if (lo < 0 || hi < lo || hi > dlen) {
            bad = 1;
            break;
        }
        if (mode == CELLS_HASH) {
            res[i] = (int64_t)hash_bytes(base + lo, hi - lo);
        } else if (!plain_cell(base + lo, hi - lo)) {
            plain = 0;
            break;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_Format(PyExc_ValueError, "%s: an offset points outside the data", name);
        goto done;
    }
    result = mode == CELLS_HASH ? Py_NewRef(Py_None) : PyBool_FromLong(plain);
done:
    release(&off);
    release(&data);
    release(&out);
    return result;
}

static PyObject *hash_cells(PyObject *self, PyObject *args) { return walk_cells(args, CELLS_HASH); }

static PyObject *plain_cells(PyObject *self, PyObject *args) { return walk_cells(args, CELLS_PLAIN); }

/* --- codes of a column of few distinct values --------------------------------------------------
 *
 * few_codes(chunks, out, firsts) -> int
 *
 * chunks: a tuple of (offsets, data, n, offset_width) of Arrow string arrays, as for hash_cells,
 * read one after the other as one column of len(out) cells. Each cell's code into out (int64):
 * 0 for the first distinct value met, 1 for the next, ...: the indices of Arrow's
 * dictionary_encode of the column, whose dictionary lists the values in the order they first
 * appear (calculators.log_csv._dictionary_encode, the definition). Each value's first cell (its
 * position in the column) into firsts (int64), in that order, and their number returned; -1
 * (out and firsts partly written) once the column has more values than firsts has room for (at
 * most 2**20), or a lookup looked at more than MAX_PROBES slots: the caller then asks Arrow. A value up to 16 bytes long is found by its length
 * and its first and last eight bytes (all of it); a longer one by a hash of all its bytes, and
 * compared whole with the value's first cell.
 */
#define FEW_MAX (1 << 20)
/* the most slots a lookup looks at: a table at most half full needs a few, whatever the values,
 * unless they were made to collide (a hostile log: the caller then asks Arrow) */
#define MAX_PROBES 1024

typedef struct {
    int64_t len;
    uint64_t head, tail;
    const unsigned char *p;
} FewKey;

/* the first min(len, 8) bytes at p as the low bytes of a number (the rest 0); `room`: the
 * bytes readable from p on (8 or more: one load, masked) */
static inline uint64_t load_upto8(const unsigned char *p, int64_t len, int64_t room) {
    uint64_t x = 0;
    if (room >= 8) {
        memcpy(&x, p, 8);
        return len >= 8 ? x : x & ((((uint64_t)1) << (8 * len)) - 1);
    }
    for (int64_t k = 0; k < len && k < 8; k++)
        x |= (uint64_t)p[k] << (8 * k);
    return x;
}

/* the key of the cell p[0:len] (`room`: the bytes readable from p on) and its hash into *h: a
 * value up to 16 bytes long is its length and end bytes, a longer one is hashed whole */
static inline FewKey few_key(const unsigned char *p, int64_t len, int64_t room, uint64_t *h) {
    FewKey key = {len, load_upto8(p, len, room), len > 8 ? load_upto8(p + len - 8, 8, 8) : 0, p};
    *h = len > 16 ? hash_bytes(p, len)
                  : (key.head * 0x9E3779B97F4A7C15ULL) ^ ((key.tail + (uint64_t)len) * 0xC2B2AE3D27D4EB4FULL);
    return key;
}

/* whether two keys are one value (compared whole past 16 bytes) */
static inline int few_same(const FewKey *a, const FewKey *b) {
    return a->len == b->len && a->head == b->head && a->tail == b->tail &&
           (a->len <= 16 || memcmp(a->p, b->p, (size_t)a->len) == 0);
}

static PyObject *few_codes(PyObject *self, PyObject *args) {
    PyObject *chunks, *o_out, *o_firsts;
    if (!PyArg_ParseTuple(args, "O!OO", &PyTuple_Type, &chunks, &o_out, &o_firsts))
        return NULL;
    Py_ssize_t nch = PyTuple_GET_SIZE(chunks);
    Buf out = {0}, fb = {0};
    Buf *bufs = PyMem_Calloc((size_t)(2 * nch + 1), sizeof(Buf));
    Py_ssize_t *ns = PyMem_Calloc((size_t)nch + 1, sizeof(Py_ssize_t));
    int *widths = PyMem_Calloc((size_t)nch + 1, sizeof(int));
    FewKey *keys = NULL;
    int32_t *slots = NULL;
    PyObject *result = NULL;
    if (!bufs || !ns || !widths) {
        PyErr_NoMemory();
        goto done;
    }
    if (get_buf(o_out, &out, 8, 1, "out") < 0 || get_buf(o_firsts, &fb, 8, 1, "firsts") < 0)
        goto done;
    Py_ssize_t max_distinct = count_of(&fb, 8);
    if (max_distinct < 1 || max_distinct > FEW_MAX) {
        PyErr_Format(PyExc_ValueError, "few_codes: firsts has room for 1 to %d values", FEW_MAX);
        goto done;
    }
    int bits = 1;                    /* the slots: a power of two, at least twice max_distinct */
    while (((Py_ssize_t)1 << bits) < 2 * max_distinct)
        bits++;
    size_t n_slots = (size_t)1 << bits;
    keys = PyMem_Calloc((size_t)max_distinct, sizeof(FewKey));
    slots = PyMem_Calloc(n_slots, sizeof(int32_t));
    if (!keys || !slots) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t c = 0; c < nch; c++) {
        PyObject *t = PyTuple_GET_ITEM(chunks, c);
        PyObject *o_off, *o_data;
        if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "OOni", &o_off, &o_data, &ns[c], &widths[c])) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "few_codes: each chunk is (offsets, data, n, offset_width)");
            goto done;
        }
        if (widths[c] != 4 && widths[c] != 8) {
            PyErr_SetString(PyExc_ValueError, "few_codes: offset_width is 4 or 8");
            goto done;
        }
        if (get_buf(o_off, &bufs[2 * c], 1, 0, "offsets") < 0 || get_buf(o_data, &bufs[2 * c + 1], 1, 0, "data") < 0)
            goto done;
        if (ns[c] < 0 || ns[c] > bufs[2 * c].view.len / widths[c] - 1) {
            PyErr_SetString(PyExc_ValueError, "few_codes: offsets do not hold n cells");
            goto done;
        }
        total += ns[c];
    }
    if (total != count_of(&out, 8)) {
        PyErr_SetString(PyExc_ValueError, "few_codes: out is not as long as the chunks' cells");
        goto done;
    }
    int64_t *res = out.view.buf, *firsts = fb.view.buf;
    int bad = 0, many = 0;
    Py_ssize_t distinct = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t at = 0;
    for (Py_ssize_t c = 0; c < nch && !bad && !many; c++) {
        const unsigned char *ob = bufs[2 * c].view.buf, *base = bufs[2 * c + 1].view.buf;
        Py_ssize_t dlen = bufs[2 * c + 1].view.len;
        for (Py_ssize_t i = 0; i < ns[c]; i++) {
            int64_t lo, hi;
            cell_bounds(ob, widths[c], i, &lo, &hi);
            if (lo < 0 || hi < lo || hi > dlen) {
                bad = 1;
                break;
            }
            uint64_t h;
            FewKey cell = few_key(base + lo, hi - lo, dlen - lo, &h);
            size_t slot = (size_t)(h >> (64 - bits));
            Py_ssize_t code;
            for (int probes = 0;; probes++) {
                if (probes > MAX_PROBES) {            /* values made to collide: Arrow encodes them */
                    many = 1;
                    break;
                }
                code = (Py_ssize_t)slots[slot] - 1;
                if (code < 0) {                       /* a value not met before */
                    if (distinct == max_distinct) {
                        many = 1;
                        break;
                    }
                    code = distinct++;
                    keys[code] = cell;
                    firsts[code] = at + i;
                    slots[slot] = (int32_t)(code + 1);
                    break;
                }
                if (few_same(&keys[code], &cell))
                    break;
                slot = (slot + 1) & (n_slots - 1);
            }
            if (many)
                break;
            res[at + i] = code;
        }
        at += ns[c];
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "few_codes: an offset points outside the data");
        goto done;
    }
    result = PyLong_FromSsize_t(many ? -1 : distinct);
done:
    if (bufs != NULL)
        release_all(bufs, 2 * nch);
    release(&out);
    release(&fb);
    PyMem_Free(bufs);
    PyMem_Free(ns);
    PyMem_Free(widths);
    PyMem_Free(keys);
    PyMem_Free(slots);
    return result;
}

/* --- times written 2027-02-03T10:00:00Z or 2027-02-03T04:00:00-06:00 ----------------------
 *
 * iso_seconds(offsets, data, n, offset_width, out, na) -> bool
 *
 * An Arrow string array's n cells (offsets: n + 1 little-endian integers of offset_width bytes,
 * 4 for string, 8 for large_string, already advanced to the array's offset; data: its value
 * bytes) as epoch seconds into out (int64); an empty cell gives na. True when every cell was
 * empty or of exactly one of the two forms, with a real date, hours below 24, minutes and
 * seconds below 60, an offset's hours below 24, and a result within the range of Arrow's
 * nanosecond timestamps (1677-09-21 .. 2262-04-11); False at the first other cell, leaving out
 * partly written: the caller then asks Arrow's cast, which is the definition of these times
 * (calculators.log_csv.fast_times), and which gives the same seconds for every cell taken here.
 */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int month_days(int y, int m) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return days[m - 1];
}

/* days from 1970-01-01 to the first of each month of 1970-2169 (`days_from_civil`, looked up) */
#define TABLE_FROM 1970
#define TABLE_YEARS 200
static int64_t month_start[TABLE_YEARS * 12];
static int month_start_ready = 0;

static void fill_month_start(void) {
    for (int y = 0; y < TABLE_YEARS; y++)
        for (int m = 1; m <= 12; m++)
            month_start[y * 12 + m - 1] = days_from_civil(TABLE_FROM + y, m, 1);
    month_start_ready = 1;
}

/* the two digits at s as a number, or -1 */
static inline int two(const unsigned char *s) {
    unsigned a = (unsigned)s[0] - '0', b = (unsigned)s[1] - '0';
    return (a > 9 || b > 9) ? -1 : (int)(a * 10 + b);
}

/* seconds of one cell of 20 or 25 bytes; 0 when it is not of the two forms */
static int parse_cell(const unsigned char *s, Py_ssize_t len, int64_t *out) {
    if (len != 20 && len != 25)
        return 0;
    int c1 = two(s), c2 = two(s + 2), mo = two(s + 5), d = two(s + 8), h = two(s + 11), mi = two(s + 14),
        se = two(s + 17);
    if ((c1 | c2 | mo | d | h | mi | se) < 0 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':')
        return 0;
    int y = c1 * 100 + c2;
    if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59 || se > 59)
        return 0;
    int64_t days = (y >= TABLE_FROM && y < TABLE_FROM + TABLE_YEARS) ? month_start[(y - TABLE_FROM) * 12 + mo - 1] + d - 1
                                                                     : days_from_civil(y, mo, d);
    int64_t t = days * 86400 + h * 3600 + mi * 60 + se;
    if (len == 20) {
        if (s[19] != 'Z')
            return 0;
    } else {
        int oh = two(s + 20), om = two(s + 23);
        if ((s[19] != '+' && s[19] != '-') || oh < 0 || om < 0 || s[22] != ':' || oh > 23 || om > 59)
            return 0;
        int64_t off = oh * 3600 + om * 60;
        t += s[19] == '+' ? -off : off;
    }
    /* within Arrow's timestamp[ns] (|ns| < 2**63), with a second to spare at either end */
    if (t < -9223372035LL || t > 9223372035LL)
        return 0;
    *out = t;
    return 1;
}

static PyObject *iso_seconds(PyObject *self, PyObject *args) {
    PyObject *o_off, *o_data, *o_out;
    Py_ssize_t n;
    int width;
    long long na;
    if (!PyArg_ParseTuple(args, "OOniOL", &o_off, &o_data, &n, &width, &o_out, &na))
        return NULL;
    if (width != 4 && width != 8) {
        PyErr_SetString(PyExc_ValueError, "iso_seconds: offset_width is 4 or 8");
        return NULL;
    }
    Buf off = {0}, data = {0}, out = {0};
    PyObject *result = NULL;
    if (get_buf(o_off, &off, 1, 0, "offsets") < 0)
        return NULL;
    if (get_buf(o_data, &data, 1, 0, "data") < 0)
        goto done;
    if (get_buf(o_out, &out, 8, 1, "out") < 0)
        goto done;
    if (n < 0 || n > off.view.len / width - 1 || count_of(&out, 8) != n) {
        PyErr_SetString(PyExc_ValueError, "iso_seconds: offsets or out do not hold n cells");
        goto done;
    }
    const unsigned char *base = data.view.buf, *ob = off.view.buf;
    Py_ssize_t dlen = data.view.len;
    int64_t *res = out.view.buf;
    int ok = 1;
    if (!month_start_ready)          /* (with the GIL held: filled once) */
        fill_month_start();
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t lo, hi;
        if (width == 4) {
            int32_t a, b;
            memcpy(&a, ob + i * 4, 4);
            memcpy(&b, ob + (i + 1) * 4, 4);
            lo = a;
            hi = b;
        } else {
            memcpy(&lo, ob + i * 8, 8);
            memcpy(&hi, ob + (i + 1) * 8, 8);
        }
        if (lo < 0 || hi < lo || hi > dlen) {
            ok = 0;
            break;
        }
        if (hi == lo) {
            res[i] = na;
            continue;
        }
        if (!parse_cell(base + lo, hi - lo, &res[i])) {
            ok = 0;
            break;
        }
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(ok ? Py_True : Py_False);
done:
    release(&off);
    release(&data);
    release(&out);
    return result;
}

/* --- an incident log of plain cells split into its columns ---------------------------------------
 *
 * line_ends(data, lo, hi) -> int
 *
 * The number of lines in data[lo:hi] that end in a line feed and hold a byte other than a
 * carriage return before it (memchr from one to the next: a fifth of the time of bytes.count):
 * with one more, the most rows split_plain can find there (an empty line is no row, and a log
 * of millions of them reserves no room for them).
 *
 * split_plain(data, lo, hi, kinds, outs, na, row0) -> (rows, dictionaries) or None
 *
 * The rows of a CSV without a quote character in data[lo:hi] (lo and hi at the start of a line,
 * or hi at the end of data), split at commas and line ends into the columns kinds names, one
 * byte per cell of a row: 0 a column left out, 1 TEXT (the cells copied, as an Arrow string
 * array), 2 CODES (each cell's code among the column's distinct cells by first appearance, as
 * for few_codes, with no limit on their number), 3 TIMES (the seconds iso_seconds reads, na for
 * an empty cell). outs holds, for each column not left out and in order: TEXT (offsets, values)
 * (int32 with room for the rows + 1, and bytes with room for the cells: offsets[0] is set to 0
 * here); CODES and TIMES an int64 array, the rows written from row0 on. It reads what Arrow's
 * CSV reader reads of such a file with the header cut off (calculators.log_csv_parse.read_csv_arrow,
 * the definition, which the tests compare it with): a line ends at a line feed, a carriage
 * return before it is not part of the line, and an empty line is no row.
 *
 * The rows' number is returned with, for each CODES column in order, (count, offsets, values):
 * its distinct cells as the int32 offsets and value bytes of an Arrow string array. None (outs
 * partly written) at the first thing this does not read as Arrow would or does not read at all,
 * the caller then asking Arrow: a quote character, a carriage return not before a line feed, a
 * row of another number of cells, a time of another form, more rows or TEXT bytes than outs have
 * room for, more than 2**31 - 1 bytes in one column.
 */
static PyObject *line_ends(PyObject *self, PyObject *args) {
    PyObject *o_data;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "Onn", &o_data, &lo, &hi))
        return NULL;
    Buf data = {0};
    if (get_buf(o_data, &data, 1, 0, "data") < 0)
        return NULL;
    if (lo < 0 || hi < lo || hi > data.view.len) {
        release(&data);
        PyErr_SetString(PyExc_ValueError, "line_ends: lo and hi are not within data");
        return NULL;
    }
    Py_ssize_t count = 0;
    const unsigned char *p = (const unsigned char *)data.view.buf + lo, *end = (const unsigned char *)data.view.buf + hi;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        count += nl > p && !(nl == p + 1 && *p == '\r');
        p = nl + 1;
    }
    Py_END_ALLOW_THREADS
    release(&data);
    return PyLong_FromSsize_t(count);
}

enum { PLAIN_SKIP, PLAIN_TEXT, PLAIN_CODES, PLAIN_TIMES };

typedef struct {
    FewKey *keys;
    uint64_t *hashes;
    Py_ssize_t n, cap;
    int32_t *slots;
    int bits;
} Codes;

typedef struct {
    int kind;
    Buf a, b;
    int64_t *i64;                 /* CODES, TIMES */
    int32_t *off;                 /* TEXT */
    unsigned char *vals;
    Py_ssize_t vcap, vpos;
    Codes codes;
} PlainCol;

static void codes_free(Codes *c) {
    PyMem_RawFree(c->keys);
    PyMem_RawFree(c->hashes);
    PyMem_RawFree(c->slots);
    c->keys = NULL;
    c->hashes = NULL;
    c->slots = NULL;
}

static int codes_rehash(Codes *c, int bits) {
    size_t n_slots = (size_t)1 << bits;
    int32_t *slots = PyMem_RawCalloc(n_slots, sizeof(int32_t));
    if (!slots)
        return -1;
    for (Py_ssize_t i = 0; i < c->n; i++) {
        size_t s = (size_t)(c->hashes[i] >> (64 - bits));
        while (slots[s])
            s = (s + 1) & (n_slots - 1);
        slots[s] = (int32_t)(i + 1);
    }
    PyMem_RawFree(c->slots);
    c->slots = slots;
    c->bits = bits;
    return 0;
}

/* the code of the cell p[0:len] (`room`: the bytes readable from p on), a new one for a value not
 * met before; -1 when memory ran out or the column has 2**31 - 2 distinct values, -2 after
 * MAX_PROBES slots looked at in vain (values made to share their hash's upper bits, which no
 * log's values do by chance at a table at most half full: Arrow encodes such a column) */
static Py_ssize_t codes_of(Codes *c, const unsigned char *p, int64_t len, int64_t room) {
    uint64_t h;
    FewKey cell = few_key(p, len, room, &h);
    size_t mask = ((size_t)1 << c->bits) - 1, slot = (size_t)(h >> (64 - c->bits));
    for (int probes = 0;; probes++) {
        int32_t s = c->slots[slot];
        if (!s)
            break;
        if (few_same(&c->keys[s - 1], &cell))
            return s - 1;
        if (probes == MAX_PROBES)
            return -2;
        slot = (slot + 1) & mask;
    }
    if (c->n >= INT32_MAX - 1)
        return -1;
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap * 2;
        FewKey *keys = PyMem_RawRealloc(c->keys, (size_t)cap * sizeof(FewKey));
        if (!keys)
            return -1;
        c->keys = keys;
        uint64_t *hashes = PyMem_RawRealloc(c->hashes, (size_t)cap * sizeof(uint64_t));
        if (!hashes)
            return -1;
        c->hashes = hashes;
        c->cap = cap;
    }
    Py_ssize_t code = c->n++;
    c->keys[code] = cell;
    c->hashes[code] = h;
    c->slots[slot] = (int32_t)(code + 1);
    if (2 * c->n > ((Py_ssize_t)1 << c->bits) && codes_rehash(c, c->bits + 1) < 0)
        return -1;
    return code;
}

#define CODES_FIRST_BITS 6

static PyObject *split_plain(PyObject *self, PyObject *args) {
    PyObject *o_data, *outs;
    Py_ssize_t lo, hi, nk;
    const char *kinds;
    long long na;
    Py_ssize_t row0;
    if (!PyArg_ParseTuple(args, "Onny#O!Ln", &o_data, &lo, &hi, &kinds, &nk, &PyTuple_Type, &outs, &na, &row0))
        return NULL;
    Buf data = {0};
    PlainCol *cols = NULL;
    Py_ssize_t ncol = 0, made = 0;
    PyObject *result = NULL;
    char *kinds_held = NULL;
    if (get_buf(o_data, &data, 1, 0, "data") < 0)
        return NULL;
    /* the kinds as they are now, for the whole call (a writable buffer another thread changed
     * while the loop runs without the GIL would otherwise name columns never checked) */
    if (nk >= 1 && (kinds_held = PyMem_Malloc((size_t)nk)) == NULL) {
        release(&data);
        return PyErr_NoMemory();
    }
    if (nk >= 1)
        memcpy(kinds_held, kinds, (size_t)nk);
    kinds = kinds_held;
    if (lo < 0 || hi < lo || hi > data.view.len || nk < 1 || row0 < 0) {
        PyErr_SetString(PyExc_ValueError, "split_plain: lo and hi are not within data, no kinds, or row0 < 0");
        goto done;
    }
    for (Py_ssize_t k = 0; k < nk; k++) {
        if (kinds[k] < PLAIN_SKIP || kinds[k] > PLAIN_TIMES) {
            PyErr_SetString(PyExc_ValueError, "split_plain: a kind is 0, 1, 2 or 3");
            goto done;
        }
        ncol += kinds[k] != PLAIN_SKIP;
    }
    if (PyTuple_GET_SIZE(outs) != ncol) {
        PyErr_SetString(PyExc_ValueError, "split_plain: one out per column not left out");
        goto done;
    }
    cols = PyMem_Calloc((size_t)ncol + 1, sizeof(PlainCol));
    if (!cols) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t cap = -1, text_cap = -1;
    for (Py_ssize_t k = 0, j = 0; k < nk; k++) {
        if (kinds[k] == PLAIN_SKIP)
            continue;
        PlainCol *c = &cols[j];
        PyObject *o = PyTuple_GET_ITEM(outs, j);
        j++;
        made = j;
        c->kind = kinds[k];
        Py_ssize_t rows;
        if (c->kind == PLAIN_TEXT) {
            PyObject *o_off, *o_vals;
            if (!PyTuple_Check(o) || !PyArg_ParseTuple(o, "OO", &o_off, &o_vals)) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "split_plain: a text column's out is (offsets, values)");
                goto done;
            }
            if (get_buf(o_off, &c->a, 4, 1, "offsets") < 0 || get_buf(o_vals, &c->b, 1, 1, "values") < 0)
                goto done;
            rows = count_of(&c->a, 4) - 1;
            c->off = c->a.view.buf;
            c->vals = c->b.view.buf;
            c->vcap = c->b.view.len;
            if (rows < 0) {
                PyErr_SetString(PyExc_ValueError, "split_plain: offsets have no room");
                goto done;
            }
            c->off[0] = 0;
            if (text_cap >= 0 && rows != text_cap) {
                PyErr_SetString(PyExc_ValueError, "split_plain: the text outs have room for different numbers of rows");
                goto done;
            }
            text_cap = rows;
            continue;
        } else {
            if (get_buf(o, &c->a, 8, 1, "out") < 0)
                goto done;
            rows = count_of(&c->a, 8);
            c->i64 = c->a.view.buf;
            if (c->kind == PLAIN_CODES) {
                c->codes.cap = 1 << (CODES_FIRST_BITS - 1);
                c->codes.keys = PyMem_RawMalloc((size_t)c->codes.cap * sizeof(FewKey));
                c->codes.hashes = PyMem_RawMalloc((size_t)c->codes.cap * sizeof(uint64_t));
                c->codes.slots = PyMem_RawCalloc((size_t)1 << CODES_FIRST_BITS, sizeof(int32_t));
                c->codes.bits = CODES_FIRST_BITS;
                if (!c->codes.keys || !c->codes.hashes || !c->codes.slots) {
                    PyErr_NoMemory();
                    goto done;
                }
            }
        }
        if (cap >= 0 && rows != cap) {
            PyErr_SetString(PyExc_ValueError, "split_plain: the outs have room for different numbers of rows");
            goto done;
        }
        cap = rows;
    }
    /* the rows this may write: from row0 on in the int64 outs, from 0 in the text ones */
    Py_ssize_t room = cap < 0 ? text_cap : text_cap < 0 ? cap - row0 : (cap - row0 < text_cap ? cap - row0 : text_cap);
    if (room < 0)
        room = 0;
    if (!month_start_ready)          /* (with the GIL held: filled once) */
        fill_month_start();
    const unsigned char *base = data.view.buf, *p = base + lo, *end = base + hi, *stop = base + data.view.len;
    Py_ssize_t row = 0;
    int fail = 0;                    /* 1: not read here (None), 2: out of memory */
    Py_BEGIN_ALLOW_THREADS
    while (p < end && !fail) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        const unsigned char *le = nl ? nl : end, *next = nl ? nl + 1 : end;
        if (le > p && le[-1] == '\r')
            le--;
        if (memchr(p, '\r', (size_t)(le - p)) || memchr(p, '"', (size_t)(le - p))) {
            fail = 1;
            break;
        }
        if (le == p) {               /* an empty line: no row */
            p = next;
            continue;
        }
        if (row >= room) {
            fail = 1;
            break;
        }
        const unsigned char *cell = p;
        for (Py_ssize_t k = 0, j = 0; k < nk; k++) {
            const unsigned char *ce;
            if (k + 1 < nk) {
                ce = memchr(cell, ',', (size_t)(le - cell));
                if (!ce) {
                    fail = 1;        /* too few cells */
                    break;
                }
            } else {
                if (memchr(cell, ',', (size_t)(le - cell))) {
                    fail = 1;        /* too many */
                    break;
                }
                ce = le;
            }
            if (kinds[k] != PLAIN_SKIP) {
                PlainCol *c = &cols[j++];
                int64_t len = ce - cell;
                if (c->kind == PLAIN_TEXT) {
                    if (len > c->vcap - c->vpos || c->vpos + len > INT32_MAX) {
                        fail = 1;
                        break;
                    }
                    memcpy(c->vals + c->vpos, cell, (size_t)len);
                    c->vpos += len;
                    c->off[row + 1] = (int32_t)c->vpos;
                } else if (c->kind == PLAIN_CODES) {
                    Py_ssize_t code = codes_of(&c->codes, cell, len, stop - cell);
                    if (code < 0) {
                        fail = code == -2 ? 1 : 2;
                        break;
                    }
                    c->i64[row0 + row] = code;
                } else if (len == 0) {
                    c->i64[row0 + row] = na;
                } else if (!parse_cell(cell, len, &c->i64[row0 + row])) {
                    fail = 1;
                    break;
                }
            }
            cell = ce + 1;
        }
        row++;
        p = next;
    }
    Py_END_ALLOW_THREADS
    if (fail == 2) {
        PyErr_NoMemory();
        goto done;
    }
    if (fail) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *dicts = PyTuple_New(0);
    if (!dicts)
        goto done;
    for (Py_ssize_t j = 0; j < ncol; j++) {
        PlainCol *c = &cols[j];
        if (c->kind != PLAIN_CODES)
            continue;
        Py_ssize_t total = 0;
        for (Py_ssize_t i = 0; i < c->codes.n; i++)
            total += c->codes.keys[i].len;
        if (total > INT32_MAX) {
            Py_DECREF(dicts);
            result = Py_NewRef(Py_None);
            goto done;
        }
        PyObject *off = PyBytes_FromStringAndSize(NULL, (c->codes.n + 1) * 4);
        PyObject *vals = PyBytes_FromStringAndSize(NULL, total);
        PyObject *item = NULL;
        if (off && vals) {
            int32_t *o = (int32_t *)PyBytes_AS_STRING(off);
            char *v = PyBytes_AS_STRING(vals);
            Py_ssize_t at = 0;
            o[0] = 0;
            for (Py_ssize_t i = 0; i < c->codes.n; i++) {
                memcpy(v + at, c->codes.keys[i].p, (size_t)c->codes.keys[i].len);
                at += c->codes.keys[i].len;
                o[i + 1] = (int32_t)at;
            }
            item = Py_BuildValue("(nOO)", c->codes.n, off, vals);
        }
        Py_XDECREF(off);
        Py_XDECREF(vals);
        if (!item || _PyTuple_Resize(&dicts, PyTuple_GET_SIZE(dicts) + 1) < 0) {
            Py_XDECREF(item);
            Py_XDECREF(dicts);
            goto done;
        }
        PyTuple_SET_ITEM(dicts, PyTuple_GET_SIZE(dicts) - 1, item);
    }
    result = Py_BuildValue("(nN)", row, dicts);
done:
    for (Py_ssize_t j = 0; j < made; j++) {
        release(&cols[j].a);
        release(&cols[j].b);
        codes_free(&cols[j].codes);
    }
    PyMem_Free(cols);
    PyMem_Free(kinds_held);
    release(&data);
    return result;
}

/* --- a buffer to read a file into -------------------------------------------------------------
 *
 * empty_bytearray(n) -> bytearray
 *
 * A bytearray of n bytes whose content is not set (what bytearray(n) is without its zeroing):
 * for a file read into it at once (calculators.log_prefetch), where bytearray(n) would write
 * every page of a log's size while holding the GIL before the read writes them again.
 */
static PyObject *empty_bytearray(PyObject *self, PyObject *args) {
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "n", &n))
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "empty_bytearray: n below 0");
        return NULL;
    }
    return PyByteArray_FromStringAndSize(NULL, n);
}

/* --- records of a JSON document ---------------------------------------------------------------
 *
 * concat_records(n, segments, keep, sep) -> bytes
 *
 * The records keep[0], keep[1], ... (int64, each in [0, n)), sep between two of them, each
 * record the concatenation of the segments in order, a segment being
 *   - bytes: the same text in every record;
 *   - a list of n str: record k's is item k, as UTF-8;
 *   - a tuple (data, starts, ends): record k's is data[starts[k]:ends[k]] (starts and ends
 *     int64 of n items, data any bytes-like buffer);
 *   - a tuple (values, spec): record k's is values[k] (int64 of n items) written in decimal as
 *     spec says: b"d" the integer, b"fS" / b"qS" (S a digit) with S digits after a point,
 *     b"q" quoted; a value below 0 is "-" and the text of its magnitude (money as
 *     calculators.credits.money writes it, a count as str() does).
 * What `calculators.result_json.concat_records` (the definition) joins in Python. A list of
 * another length or with an item that is no str, a slice outside its data or a record out of
 * range is an error (TypeError, ValueError, IndexError), found before anything is written; a
 * str that cannot be UTF-8 (a lone surrogate) raises UnicodeEncodeError. Both passes run with
 * the GIL held (the lists' items are read), and the second checks every bound again against
 * the buffer it fills.
 */
#define MAX_SEGMENTS 64

typedef struct {
    int kind; /* 0 bytes, 1 list, 2 slices, 3 numbers */
    const char *text;
    Py_ssize_t len;
    PyObject *list;
    Buf data, starts, ends;
    int scale, quote;          /* kind 3: digits after the point, quoted */
} Segment;

#define NUMBER_TEXT 48         /* room for the text of any int64 with a point, sign and quotes */

/* The text of v as a number segment writes it (see concat_records), into out; its length. */
static Py_ssize_t number_text(int64_t v, int scale, int quote, char *out) {
    char digits[24];
    int nd = 0;
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[nd++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    while (nd <= scale)                    /* at least one digit before the point */
        digits[nd++] = '0';
    Py_ssize_t w = 0;
    if (quote)
        out[w++] = '"';
    if (v < 0)
        out[w++] = '-';
    for (int i = nd - 1; i >= 0; i--) {
        if (i == scale - 1)
            out[w++] = '.';
        out[w++] = digits[i];
    }
    if (quote)
        out[w++] = '"';
    return w;
}

static void release_segments(Segment *sg, Py_ssize_t m) {
    for (Py_ssize_t i = 0; i < m; i++) {
        release(&sg[i].data);
        release(&sg[i].starts);
        release(&sg[i].ends);
    }
}

/* record k's text of segment g: 0, or -1 with an exception set (bad == 1: a bound); a number
 * is written into scratch (NUMBER_TEXT bytes) */
static int segment_text(const Segment *g, Py_ssize_t n, Py_ssize_t k, const char **p, Py_ssize_t *len,
                        char *scratch) {
    if (g->kind == 3) {
        int64_t v;                         /* (memcpy: a buffer need not be 8-byte aligned) */
        memcpy(&v, (const char *)g->data.view.buf + k * 8, 8);
        *len = number_text(v, g->scale, g->quote, scratch);
        *p = scratch;
        return 0;
    }
    if (g->kind == 0) {
        *p = g->text;
        *len = g->len;
        return 0;
    }
    if (g->kind == 1) {
        if (PyList_GET_SIZE(g->list) != n) {
            PyErr_SetString(PyExc_ValueError, "concat_records: a list changed its length");
            return -1;
        }
        PyObject *item = PyList_GET_ITEM(g->list, k);
        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError, "concat_records: a list item is %.80s, not str", Py_TYPE(item)->tp_name);
            return -1;
        }
        *p = PyUnicode_AsUTF8AndSize(item, len);
        return *p == NULL ? -1 : 0;
    }
    int64_t lo, hi;
    memcpy(&lo, (const char *)g->starts.view.buf + k * 8, 8);
    memcpy(&hi, (const char *)g->ends.view.buf + k * 8, 8);
    if (lo < 0 || hi < lo || hi > g->data.view.len) {
        PyErr_SetString(PyExc_ValueError, "concat_records: a slice lies outside its data");
        return -1;
    }
    *p = (const char *)g->data.view.buf + lo;
    *len = (Py_ssize_t)(hi - lo);
    return 0;
}

/* One pass over the records: with dst NULL their length is summed into *w (checked against
 * overflow), else they are copied into dst (room bytes; every bound checked again). 0, or -1
 * with an exception set, 1 a record out of range, 2 the text too long, 3 more than room. */
static int walk_records(const Segment *sg, Py_ssize_t m, Py_ssize_t n, const int64_t *kk, Py_ssize_t nk,
                        const Py_buffer *sep, char *dst, Py_ssize_t room, Py_ssize_t *w) {
    char scratch[NUMBER_TEXT];
    for (Py_ssize_t r = 0; r < nk; r++) {
        int64_t k = kk[r];
        if (k < 0 || k >= n)
            return dst ? 3 : 1;
        for (Py_ssize_t i = -1; i < m; i++) {
            const char *p = sep->buf;
            Py_ssize_t len = r ? sep->len : 0;           /* (i == -1: the separator before it) */
            if (i >= 0 && segment_text(&sg[i], n, (Py_ssize_t)k, &p, &len, scratch) < 0)
                return -1;
            if (dst == NULL) {
                if (*w > PY_SSIZE_T_MAX - len)
                    return 2;
            } else {
                if (len > room - *w)
                    return 3;
                memcpy(dst + *w, p, (size_t)len);
            }
            *w += len;
        }
    }
    return 0;
}

static PyObject *concat_records(PyObject *self, PyObject *args) {
    Py_ssize_t n;
    PyObject *o_segments, *o_keep;
    Py_buffer sep;
    if (!PyArg_ParseTuple(args, "nO!Oy*", &n, &PyTuple_Type, &o_segments, &o_keep, &sep))
        return NULL;
    Segment sg[MAX_SEGMENTS];
    Py_ssize_t m = PyTuple_GET_SIZE(o_segments), taken = 0;
    Buf keep = {0};
    PyObject *result = NULL, *out = NULL;
    memset(sg, 0, sizeof(sg));
    if (n < 0 || m > MAX_SEGMENTS) {
        PyErr_SetString(PyExc_ValueError, "concat_records: n below 0 or more than 64 segments");
        goto done;
    }
    for (; taken < m; taken++) {
        PyObject *o = PyTuple_GET_ITEM(o_segments, taken);
        Segment *g = &sg[taken];
        if (PyBytes_Check(o)) {
            g->kind = 0;
            g->text = PyBytes_AS_STRING(o);
            g->len = PyBytes_GET_SIZE(o);
        } else if (PyList_Check(o)) {
            g->kind = 1;
            g->list = o;
            if (PyList_GET_SIZE(o) != n) {
                PyErr_SetString(PyExc_ValueError, "concat_records: a list is not n items long");
                goto done;
            }
        } else if (PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 3) {
            g->kind = 2;
            if (get_buf(PyTuple_GET_ITEM(o, 0), &g->data, 1, 0, "data") < 0 ||
                get_buf(PyTuple_GET_ITEM(o, 1), &g->starts, 8, 0, "starts") < 0 ||
                get_buf(PyTuple_GET_ITEM(o, 2), &g->ends, 8, 0, "ends") < 0)
                goto done;
            if (count_of(&g->starts, 8) != n || count_of(&g->ends, 8) != n) {
                PyErr_SetString(PyExc_ValueError, "concat_records: starts or ends not n items long");
                goto done;
            }
        } else if (PyTuple_Check(o) && PyTuple_GET_SIZE(o) == 2) {
            g->kind = 3;
            PyObject *spec = PyTuple_GET_ITEM(o, 1);
            if (get_buf(PyTuple_GET_ITEM(o, 0), &g->data, 8, 0, "values") < 0)
                goto done;
            if (count_of(&g->data, 8) != n) {
                PyErr_SetString(PyExc_ValueError, "concat_records: values not n items long");
                goto done;
            }
            const char *sp = PyBytes_Check(spec) ? PyBytes_AS_STRING(spec) : NULL;
            Py_ssize_t sl = sp ? PyBytes_GET_SIZE(spec) : 0;
            if (sp != NULL && sl == 1 && (sp[0] == 'd' || sp[0] == 'q')) {
                g->scale = 0;
                g->quote = sp[0] == 'q';
            } else if (sp != NULL && sl == 2 && (sp[0] == 'f' || sp[0] == 'q') && sp[1] >= '0' && sp[1] <= '9') {
                g->scale = sp[1] - '0';
                g->quote = sp[0] == 'q';
            } else {
                PyErr_SetString(PyExc_TypeError, "concat_records: a number spec is b'd', b'q', b'fS' or b'qS'");
                goto done;
            }
        } else {
            PyErr_SetString(PyExc_TypeError, "concat_records: a segment is bytes, a list of str, (data, starts, ends) "
                                             "or (values, spec)");
            goto done;
        }
    }
    if (get_buf(o_keep, &keep, 8, 0, "keep") < 0)
        goto done;
    Py_ssize_t nk = count_of(&keep, 8);
    const int64_t *kk = keep.view.buf;
    Py_ssize_t total = 0, w = 0;
    int got = walk_records(sg, m, n, kk, nk, &sep, NULL, 0, &total);
    if (got != 0)
        goto failed;
    out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL)
        goto done;
    got = walk_records(sg, m, n, kk, nk, &sep, PyBytes_AS_STRING(out), total, &w);
    if (got == 0 && w != total)
        got = 3;
    if (got != 0)
        goto failed;
    result = out;
    out = NULL;
    goto done;
failed:                  /* walk_records: -1 an exception set, 1 a record out of range, 2 too long, 3 changed */
    if (got == 1)
        PyErr_SetString(PyExc_IndexError, "concat_records: a record is out of range");
    else if (got == 2)
        PyErr_SetString(PyExc_OverflowError, "concat_records: the text would be too long");
    else if (got == 3)
        PyErr_SetString(PyExc_ValueError, "concat_records: the records changed between the passes");
done:
    Py_XDECREF(out);
    release_segments(sg, taken < m ? taken + 1 : m);
    release(&keep);
    PyBuffer_Release(&sep);
    return result;
}

static PyMethodDef methods[] = {
    {"overlap_lo", overlap_lo, METH_VARARGS, "First overlapping b and overlap count per sorted a interval."},
    {"overlap_fill", overlap_fill, METH_VARARGS, "The (a, b) pairs from overlap_lo's starts and counts."},
    {"at_least_sorted", at_least_sorted, METH_VARARGS, "Merged stretches where a sorted sweep's level is at least a unit's threshold."},
    {"seconds_per_unit", seconds_per_unit, METH_VARARGS, "Seconds of intervals inside [lo, hi) per unit."},
    {"or_per_unit", or_per_unit, METH_VARARGS, "Bits or-ed per unit."},
    {"select_overlapping", select_overlapping, METH_VARARGS, "Rows of intervals that overlap [lo, hi), gathered."},
    {"join_strings", join_strings, METH_VARARGS, "Cells of an Arrow string array by code, each followed by a separator."},
    {"merge_lists", merge_lists, METH_VARARGS, "Each unit's ascending code list merged with its parents' lists."},
    {"touched_blocks", touched_blocks, METH_VARARGS, "The blocks of its unit each piece overlaps or touches."},
    {"outside_counts", outside_counts, METH_VARARGS, "Long blocks inside each kept merged outage."},
    {"outside_fill", outside_fill, METH_VARARGS, "Kept outages less their long blocks."},
    {"minus_parent_sorted", minus_parent_sorted, METH_VARARGS, "Child intervals less their parent's."},
    {"merge_walk", merge_walk, METH_VARARGS, "Sorted intervals merged where they overlap or touch."},
    {"keys_sorted", keys_sorted, METH_VARARGS, "Whether (unit, time) never decreases."},
    {"sort_i64", sort_i64, METH_VARARGS, "An int64 array sorted in place (a radix sort)."},
    {"split_rows", split_rows, METH_VARARGS, "Columns' values into the outputs of their rows' classes."},
    {"hash_cells", hash_cells, METH_VARARGS, "A 64-bit hash of each cell of an Arrow string array."},
    {"few_codes", few_codes, METH_VARARGS, "Codes of a string column of few distinct values, by first appearance."},
    {"plain_cells", plain_cells, METH_VARARGS,
     "Whether no cell of an Arrow string array is empty or has white space around it."},
    {"iso_seconds", iso_seconds, METH_VARARGS, "Epoch seconds of an Arrow string array of canonical ISO times."},
    {"line_ends", line_ends, METH_VARARGS, "The number of line feeds in data[lo:hi]."},
    {"split_plain", split_plain, METH_VARARGS, "The rows of a CSV without quotes split into columns."},
    {"empty_bytearray", empty_bytearray, METH_VARARGS, "A bytearray of n bytes, its content not set."},
    {"concat_records", concat_records, METH_VARARGS, "Records joined from constant, per-record and sliced segments."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "calculators._kernels",
                                    "One-pass loops of slakit credits (see the numpy forms that call them).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
