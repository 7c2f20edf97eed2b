/* The express lane of repeat launches: a launch like one the checked fast path already made
 * (tile_lang_cupy/express.py builds the plan) is compared, packed and handed to cuLaunchKernel here,
 * with no Python frame per argument. Anything it does not recognise returns False, and the
 * Python path (which checks everything and raises the errors) takes the launch.
 *
 * Compiled by the host C compiler at first use against this Python's headers; no CUDA headers:
 * cuLaunchKernel is called through the address the plan gives. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned smem, void *stream, void **params, void **extra);

enum { MAX_SLOTS = 64, MAX_ENTRIES = 4 };
enum { P_TORCH, P_CUPY, P_BUFFER };

/* What one argument of the recorded launch was: for a pointer its class and what its probe read;
 * for a scalar its slot's struct code and, for an int, its width class; for a constexpr its value. */
typedef struct {
  int slot;          /* the kernel parameter it fills, or -1 for a constexpr or option */
  char code;         /* 'P' pointer, else a struct code: b h i q B H I Q ? f d */
  int pointer;       /* P_TORCH, P_CUPY or P_BUFFER */
  PyObject *cls;     /* exact class of the argument */
  PyObject *dtype;   /* pointer: its dtype (torch, CuPy) or element type (Buffer), compared by identity */
  PyObject *extra;   /* CuPy: True if C-contiguous, else its strides; Buffer: its backend */
  long long device;  /* pointer: its device index */
  unsigned align;    /* pointer: address mod 16 */
  int int_class;     /* int: launch_cache.int_class */
  PyObject *value;   /* constexpr: the value */
} Arg;

typedef struct {
  Py_ssize_t nargs;
  PyObject *names;   /* tuple of keyword names, in call order */
  Py_ssize_t nflat;
  Arg *args;
  int nslots;
  PyObject *backend; /* the backend's name */
  long long epoch;   /* registry.EPOCH[0] when recorded */
  void *function;
  unsigned block, smem;
  long long device;
  int fixed_stream;
  unsigned long long stream;
  launch_fn launch;
  PyObject *keep;    /* what keeps the function loaded */
  PyObject *meta;    /* the constexprs a callable grid is given (a copy each launch) */
  PyObject *current_device, *current_stream, *ambient, *torch_stream;
} Entry;

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *selected; /* registry._SELECTED */
  PyObject *env;      /* registry.ENV_VAR */
  PyObject *fallback; /* registry.DEFAULT */
  PyObject *epoch;    /* registry.EPOCH: a one-element list */
  PyObject *hooks;    /* kernel.LAUNCH_HOOKS */
  PyObject *foreign;  /* memory.Foreign */
  Entry *entries[MAX_ENTRIES];
  int count;
} Express;

static PyObject *s_dtype, *s_get_device, *s_data_ptr, *s_strides, *s_c_contiguous, *s_data, *s_device_id, *s_ptr, *s_backend,
    *s_type, *s_device, *s_torch;

static void clear_entry(Entry *e) {
  if (e == NULL) return;
  for (Py_ssize_t i = 0; i < e->nflat; ++i) {
    Arg *a = &e->args[i];
    Py_XDECREF(a->cls); Py_XDECREF(a->dtype); Py_XDECREF(a->extra); Py_XDECREF(a->value);
  }
  PyMem_Free(e->args);
  Py_XDECREF(e->names); Py_XDECREF(e->backend); Py_XDECREF(e->keep); Py_XDECREF(e->meta);
  Py_XDECREF(e->current_device); Py_XDECREF(e->current_stream); Py_XDECREF(e->ambient); Py_XDECREF(e->torch_stream);
  PyMem_Free(e);
}

static int int_class(PyObject *v) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow == 0 && x == -1 && PyErr_Occurred()) { PyErr_Clear(); return -1; }
  int width, negative = 0;
  if (overflow == 0) {
    width = (x >= -0x80000000LL && x < 0x80000000LL) ? 1 : 2;
    negative = x < 0;
    return width << 3 | (!negative) << 2 | ((x & 15) == 0) << 1 | (x == 1);
  }
  if (overflow < 0) return 0; /* below -2**63: fits no integer type */
  unsigned long long u = PyLong_AsUnsignedLongLong(v);
  if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; } /* 2**64 or more */
  return 3 << 3 | 1 << 2 | ((u & 15) == 0) << 1;
}

/* An int attribute or method result as a long long; -1 with *ok = 0 if it is not one. */
static long long as_ll(PyObject *v, int *ok) {
  if (v == NULL) { PyErr_Clear(); *ok = 0; return -1; }
  long long x = PyLong_AsLongLong(v);
  Py_DECREF(v);
  if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); *ok = 0; }
  return x;
}

static unsigned long long as_ull(PyObject *v, int *ok) {
  if (v == NULL) { PyErr_Clear(); *ok = 0; return 0; }
  unsigned long long x = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  if (x == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); *ok = 0; }
  return x;
}

/* What adoption's verdict on a CuPy array depends on (new reference): True for a C-contiguous one
 * (always adopted: no tuple is built, CuPy keeps the flag), else its strides. */
static PyObject *cupy_layout(PyObject *obj) {
  PyObject *flag = PyObject_GetAttr(obj, s_c_contiguous);
  if (flag == Py_True) return flag;
  if (flag == NULL) PyErr_Clear(); /* a CuPy without the flag: the strides */
  Py_XDECREF(flag);
  return PyObject_GetAttr(obj, s_strides);
}

/* Read a pointer argument: its dtype (new reference), device, extra (new reference) and address. */
static int read_pointer(Express *self, int kind, PyObject *obj, PyObject **dtype, PyObject **extra,
                        long long *device, unsigned long long *address) {
  int ok = 1;
  *dtype = *extra = NULL;
  if (kind == P_TORCH) {
    *dtype = PyObject_GetAttr(obj, s_dtype);
    *device = as_ll(PyObject_CallMethodNoArgs(obj, s_get_device), &ok);
    *address = as_ull(PyObject_CallMethodNoArgs(obj, s_data_ptr), &ok);
  } else if (kind == P_CUPY) {
    *dtype = PyObject_GetAttr(obj, s_dtype);
    *extra = cupy_layout(obj);
    PyObject *data = PyObject_GetAttr(obj, s_data);
    if (data == NULL) { PyErr_Clear(); ok = 0; }
    else {
      *device = as_ll(PyObject_GetAttr(data, s_device_id), &ok);
      *address = as_ull(PyObject_GetAttr(data, s_ptr), &ok);
      Py_DECREF(data);
    }
  } else {
    *dtype = PyObject_GetAttr(obj, s_type);
    *extra = PyObject_GetAttr(obj, s_backend);
    *device = as_ll(PyObject_GetAttr(obj, s_device), &ok);
    PyObject *data = PyObject_GetAttr(obj, s_data);
    if (data == NULL) { PyErr_Clear(); ok = 0; }
    else {
      if ((PyObject *)Py_TYPE(data) == self->foreign) *address = as_ull(PyObject_GetAttr(data, s_ptr), &ok);
      else {
        PyObject *memory = PyObject_GetAttr(data, s_data);
        if (memory == NULL) { PyErr_Clear(); ok = 0; }
        else { *address = as_ull(PyObject_GetAttr(memory, s_ptr), &ok); Py_DECREF(memory); }
      }
      Py_DECREF(data);
    }
  }
  if (*dtype == NULL || (kind != P_TORCH && *extra == NULL)) ok = 0;
  if (!ok) { PyErr_Clear(); Py_CLEAR(*dtype); Py_CLEAR(*extra); }
  return ok;
}

/* Pack a scalar into its 8-byte slot as struct would (its width checked by the int class). */
static int pack_scalar(char code, PyObject *v, unsigned char *slot) {
  memset(slot, 0, 8);
  if (code == 'f' || code == 'd') {
    double d = PyFloat_AS_DOUBLE(v);
    if (code == 'd') { memcpy(slot, &d, 8); return 1; }
    if (isfinite(d) && fabs(d) > FLT_MAX) return 0; /* beyond f32: the Python path converts as NumPy does */
    float f = (float)d;
    memcpy(slot, &f, 4);
    return 1;
  }
  if (code == '?') { slot[0] = v == Py_True; return 1; }
  unsigned long long bits;
  if (code == 'Q') {
    bits = PyLong_AsUnsignedLongLongMask(v);
  } else {
    bits = (unsigned long long)PyLong_AsLongLong(v);
  }
  if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
  int size = code == 'b' || code == 'B' ? 1 : code == 'h' || code == 'H' ? 2 : code == 'i' || code == 'I' ? 4 : 8;
  memcpy(slot, &bits, size); /* little-endian: the low bytes */
  return 1;
}

static int same_static(PyObject *want, PyObject *got) {
  if (want == got) return 1;
  PyTypeObject *t = Py_TYPE(want);
  if (Py_TYPE(got) != t) return 0;
  if (t == &PyFloat_Type) return memcmp(&((PyFloatObject *)want)->ob_fval, &((PyFloatObject *)got)->ob_fval, 8) == 0;
  if (t == &PyLong_Type || t == &PyUnicode_Type) {
    int r = PyObject_RichCompareBool(want, got, Py_EQ);
    if (r < 0) { PyErr_Clear(); return 0; }
    return r;
  }
  return 0;
}

/* Whether the call's flat arguments (positional, then keyword values in call order) match entry e,
 * packing them into values if so. */
static int matches(Express *self, Entry *e, PyObject *const *flat, unsigned long long *values) {
  for (Py_ssize_t i = 0; i < e->nflat; ++i) {
    Arg *a = &e->args[i];
    PyObject *v = flat[i];
    if ((PyObject *)Py_TYPE(v) != a->cls) return 0;
    if (a->slot < 0) {
      if (!same_static(a->value, v)) return 0;
      continue;
    }
    unsigned char *slot = (unsigned char *)&values[a->slot];
    if (a->code == 'P') {
      PyObject *dtype, *extra;
      long long device;
      unsigned long long address;
      if (!read_pointer(self, a->pointer, v, &dtype, &extra, &device, &address)) return 0;
      int same = dtype == a->dtype && device == a->device && (address & 15) == a->align;
      if (same && a->pointer == P_CUPY) {
        int r = PyObject_RichCompareBool(extra, a->extra, Py_EQ);
        if (r < 0) PyErr_Clear();
        same = r == 1;
      } else if (same && a->pointer == P_BUFFER) {
        same = extra == a->extra;
      }
      Py_XDECREF(dtype); Py_XDECREF(extra);
      if (!same) return 0;
      memcpy(slot, &address, 8);
      continue;
    }
    if (a->cls == (PyObject *)&PyLong_Type && int_class(v) != a->int_class) return 0;
    if (!pack_scalar(a->code, v, slot)) return 0;
  }
  return 1;
}

/* The current backend's name is e->backend: tl.backend's scope, else the environment, else the default. */
static int on_backend(Express *self, Entry *e) {
  PyObject *name = NULL;
  if (PyContextVar_Get(self->selected, NULL, &name) < 0) { PyErr_Clear(); return 0; }
  int same;
  if (name != NULL && name != Py_None && PyObject_IsTrue(name) == 1) {
    same = name == e->backend || PyUnicode_Compare(name, e->backend) == 0;
  } else {
    const char *env = getenv(PyUnicode_AsUTF8(self->env));
    if (env != NULL && env[0]) same = strcmp(env, PyUnicode_AsUTF8(e->backend)) == 0;
    else same = PyUnicode_Compare(self->fallback, e->backend) == 0;
  }
  Py_XDECREF(name);
  if (PyErr_Occurred()) { PyErr_Clear(); return 0; }
  return same;
}

/* The stream of a launch given none, as launch._ambient_stream finds it; 0 with *ok = 0 if unknown. */
static unsigned long long ambient_stream(Entry *e, int *ok) {
  PyObject *stream = PyObject_CallNoArgs(e->current_stream);
  unsigned long long ptr = stream == NULL ? 0 : as_ull(PyObject_GetAttr(stream, s_ptr), ok);
  if (stream == NULL) { PyErr_Clear(); *ok = 0; return 0; }
  Py_DECREF(stream);
  if (ptr || !*ok) return ptr;
  if (PyList_GET_SIZE(e->torch_stream) > 0) {
    PyObject *dev = PyLong_FromLongLong(e->device);
    if (dev == NULL) { PyErr_Clear(); *ok = 0; return 0; }
    ptr = as_ull(PyObject_CallOneArg(PyList_GET_ITEM(e->torch_stream, 0), dev), ok);
    Py_DECREF(dev);
    return ptr;
  }
  PyObject *modules = PyImport_GetModuleDict();
  if (PyDict_GetItemWithError(modules, s_torch) == NULL) { PyErr_Clear(); return 0; } /* no torch: the default */
  return as_ull(PyObject_CallNoArgs(e->ambient), ok); /* torch's, once it has CUDA started */
}

/* A grid as launch_cache.plain_grid takes it: a tuple of one to three ints within CUDA's limits,
 * padded with ones; a callable one is called with a copy of the constexprs first. 0: not one. */
static int plain_grid(PyObject *grid, PyObject *meta, unsigned out[3]) {
  PyObject *made = NULL;
  if (!PyTuple_CheckExact(grid)) {
    if (!PyCallable_Check(grid)) return 0;
    PyObject *copy = PyDict_Copy(meta);
    if (copy == NULL) { PyErr_Clear(); return 0; }
    made = grid = PyObject_CallOneArg(grid, copy);
    Py_DECREF(copy);
    if (made == NULL) { PyErr_Clear(); return 0; }
    if (!PyTuple_CheckExact(grid)) { Py_DECREF(made); return 0; }
  }
  Py_ssize_t n = PyTuple_GET_SIZE(grid);
  int ok = n >= 1 && n <= 3;
  for (Py_ssize_t i = 0; i < 3 && ok; ++i) {
    if (i >= n) { out[i] = 1; continue; }
    PyObject *g = PyTuple_GET_ITEM(grid, i);
    long long v = Py_TYPE(g) == &PyLong_Type ? PyLong_AsLongLong(g) : -1;
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    ok = v > 0 && v <= (i == 0 ? 0x7FFFFFFFLL : 65535LL); /* a zero entry: the Python path launches nothing */
    out[i] = (unsigned)v;
  }
  Py_XDECREF(made);
  return ok;
}

/* Launch a call like a remembered one: flat holds its positional arguments, then its keyword
 * values, whose names are names[0..nkw). 1: launched; 0: not (nothing launched, no error set). */
static int try_launch(Express *self, PyObject *grid, PyObject *const *flat, Py_ssize_t nargs, PyObject *const *names,
                      Py_ssize_t nkw) {
  if (PyList_GET_SIZE(self->hooks) > 0 || self->count == 0) return 0;
  long long epoch = PyLong_AsLongLong(PyList_GET_ITEM(self->epoch, 0));
  for (int n = self->count - 1; n >= 0; --n) {
    Entry *e = self->entries[n];
    if (e->nargs != nargs || PyTuple_GET_SIZE(e->names) != nkw || e->epoch != epoch) continue;
    int same = 1;
    for (Py_ssize_t j = 0; j < nkw && same; ++j) {
      PyObject *want = PyTuple_GET_ITEM(e->names, j);
      same = want == names[j] || PyUnicode_Compare(want, names[j]) == 0;
    }
    unsigned long long values[MAX_SLOTS];
    if (!same || !matches(self, e, flat, values) || !on_backend(self, e)) continue;
    /* what the launch needs, copied: Python runs below (the device, the stream, a grid function)
     * and may remember another call, which can drop this entry */
    Entry at = *e;
    PyObject *held[] = {at.meta, at.current_device, at.current_stream, at.ambient, at.torch_stream, at.keep};
    for (size_t i = 0; i < sizeof held / sizeof *held; ++i) Py_INCREF(held[i]);
    int ok = 1;
    unsigned shape[3];
    if (as_ll(PyObject_CallNoArgs(at.current_device), &ok) != at.device) ok = 0;
    unsigned long long stream = !ok ? 0 : at.fixed_stream ? at.stream : ambient_stream(&at, &ok);
    ok = ok && plain_grid(grid, at.meta, shape);
    int status = -1;
    if (ok) {
      void *params[MAX_SLOTS];
      for (int i = 0; i < at.nslots; ++i) params[i] = &values[i];
      Py_BEGIN_ALLOW_THREADS
      status = at.launch(at.function, shape[0], shape[1], shape[2], at.block, 1, 1, at.smem,
                         (void *)(uintptr_t)stream, params, NULL);
      Py_END_ALLOW_THREADS
    }
    for (size_t i = 0; i < sizeof held / sizeof *held; ++i) Py_DECREF(held[i]);
    PyErr_Clear();
    return status == 0; /* not launched: the Python path launches or raises the driver's error */
  }
  PyErr_Clear();
  return 0;
}

/* express(grid, args, kwargs): launch if like a remembered call (Launcher.__call__'s way in). */
static PyObject *express_call(PyObject *op, PyObject *const *argv, size_t nargsf, PyObject *kwnames) {
  if (PyVectorcall_NARGS(nargsf) != 3 || kwnames != NULL) {
    PyErr_SetString(PyExc_TypeError, "express(grid, args, kwargs)");
    return NULL;
  }
  PyObject *grid = argv[0], *args = argv[1], *kwargs = argv[2];
  if (!PyTuple_Check(args) || (kwargs != Py_None && !PyDict_Check(kwargs))) Py_RETURN_FALSE;
  Py_ssize_t nargs = PyTuple_GET_SIZE(args), nkw = kwargs == Py_None ? 0 : PyDict_GET_SIZE(kwargs);
  if (nargs + nkw > MAX_SLOTS) Py_RETURN_FALSE;
  PyObject *flat[MAX_SLOTS], *names[MAX_SLOTS];
  for (Py_ssize_t i = 0; i < nargs; ++i) flat[i] = PyTuple_GET_ITEM(args, i);
  Py_ssize_t pos = 0, k = 0;
  PyObject *key, *value;
  while (nkw && PyDict_Next(kwargs, &pos, &key, &value)) { names[k] = key; flat[nargs + k++] = value; }
  if (try_launch((Express *)op, grid, flat, nargs, names, nkw)) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

/* record(args, kwargs, plan): keep this launch's facts. plan = (backend name, epoch, roles, codes,
 * function, block, smem, device, stream or None, launch address, keep, (Buffer, CuPy ndarray, torch
 * Tensor) classes or None, constexprs, current_device, current_stream, ambient, torch stream list).
 * Returns whether it could. */
static PyObject *express_record(PyObject *op, PyObject *const *argv, Py_ssize_t nargs) {
  Express *self = (Express *)op;
  if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "record(args, kwargs, plan)"); return NULL; }
  PyObject *args = argv[0], *kwargs = argv[1], *plan = argv[2];
  PyObject *backend, *roles, *codes, *stream, *keep, *classes, *meta, *current_device, *current_stream, *ambient,
      *torch_stream;
  long long epoch, device;
  unsigned long long function, launch;
  unsigned block, smem;
  if (!PyArg_ParseTuple(plan, "ULO!O!KIILOKOO!O!OOOO!", &backend, &epoch, &PyTuple_Type, &roles, &PyTuple_Type,
                        &codes, &function, &block, &smem, &device, &stream, &launch, &keep, &PyTuple_Type, &classes,
                        &PyDict_Type, &meta, &current_device, &current_stream, &ambient, &PyList_Type, &torch_stream))
    return NULL;
  Py_ssize_t npos = PyTuple_GET_SIZE(args), nkw = kwargs == Py_None ? 0 : PyDict_GET_SIZE(kwargs);
  Py_ssize_t nflat = npos + nkw;
  int nslots = (int)PyTuple_GET_SIZE(codes);
  if (PyTuple_GET_SIZE(roles) != nflat || nslots > MAX_SLOTS || nkw > MAX_SLOTS || PyTuple_GET_SIZE(classes) != 3)
    Py_RETURN_FALSE;
  Entry *e = PyMem_Calloc(1, sizeof(Entry));
  if (e == NULL) return PyErr_NoMemory();
  e->args = PyMem_Calloc(nflat ? nflat : 1, sizeof(Arg));
  if (e->args == NULL) { PyMem_Free(e); return PyErr_NoMemory(); }
  e->nargs = npos;
  e->nflat = nflat;
  e->nslots = nslots;
  PyObject *flat[MAX_SLOTS];
  if (nflat > MAX_SLOTS) { PyMem_Free(e->args); PyMem_Free(e); Py_RETURN_FALSE; }
  for (Py_ssize_t i = 0; i < npos; ++i) flat[i] = PyTuple_GET_ITEM(args, i);
  e->names = PyTuple_New(nkw);
  Py_ssize_t pos = 0, k = 0;
  PyObject *key, *value;
  while (nkw && PyDict_Next(kwargs, &pos, &key, &value)) {
    Py_INCREF(key);
    PyTuple_SET_ITEM(e->names, k, key);
    flat[npos + k++] = value;
  }
  Py_INCREF(backend); e->backend = backend;
  Py_INCREF(keep); e->keep = keep;
  e->meta = PyDict_Copy(meta);
  Py_INCREF(current_device); e->current_device = current_device;
  Py_INCREF(current_stream); e->current_stream = current_stream;
  Py_INCREF(ambient); e->ambient = ambient;
  Py_INCREF(torch_stream); e->torch_stream = torch_stream;
  e->epoch = epoch;
  e->function = (void *)(uintptr_t)function;
  e->launch = (launch_fn)(uintptr_t)launch;
  e->block = block;
  e->smem = smem;
  e->device = device;
  e->fixed_stream = stream != Py_None;
  e->stream = e->fixed_stream ? PyLong_AsUnsignedLongLong(stream) : 0;
  int ok = !PyErr_Occurred() && launch != 0 && e->meta != NULL, filled[MAX_SLOTS] = {0};
  for (Py_ssize_t i = 0; i < nflat && ok; ++i) {
    Arg *a = &e->args[i];
    PyObject *v = flat[i];
    a->cls = (PyObject *)Py_TYPE(v);
    Py_INCREF(a->cls);
    a->slot = (int)PyLong_AsLong(PyTuple_GET_ITEM(roles, i));
    if (a->slot < 0) {
      PyTypeObject *t = Py_TYPE(v);
      ok = t == &PyLong_Type || t == &PyFloat_Type || t == &PyUnicode_Type || t == &PyBool_Type || v == Py_None;
      Py_INCREF(v);
      a->value = v;
      continue;
    }
    if (a->slot >= nslots || filled[a->slot]) { ok = 0; break; }
    filled[a->slot] = 1;
    PyObject *code = PyTuple_GET_ITEM(codes, a->slot);
    a->code = PyUnicode_Check(code) && PyUnicode_GET_LENGTH(code) == 1 ? (char)PyUnicode_READ_CHAR(code, 0) : 0;
    if (a->code == 'P') {
      a->pointer = -1;
      for (int c = 0; c < 3; ++c)
        if (PyTuple_GET_ITEM(classes, c) == a->cls) a->pointer = c == 0 ? P_BUFFER : c == 1 ? P_CUPY : P_TORCH;
      unsigned long long address = 0;
      ok = a->pointer >= 0 && read_pointer(self, a->pointer, v, &a->dtype, &a->extra, &a->device, &address);
      a->align = (unsigned)(address & 15);
      if (ok && a->pointer == P_CUPY && a->extra != Py_True) { /* a negative stride makes adoption depend on the shape */
        for (Py_ssize_t s = 0; s < PyTuple_Size(a->extra) && ok; ++s) ok = PyLong_AsLong(PyTuple_GET_ITEM(a->extra, s)) >= 0;
        ok = ok && PyTuple_Check(a->extra) && !PyErr_Occurred();
      }
    } else if (strchr("bhiqBHIQ", a->code) && a->code) {
      ok = Py_TYPE(v) == &PyLong_Type && (a->int_class = int_class(v)) >> 3;
    } else if (a->code == 'f' || a->code == 'd') {
      ok = Py_TYPE(v) == &PyFloat_Type;
    } else {
      ok = a->code == '?' && Py_TYPE(v) == &PyBool_Type;
    }
  }
  for (int s = 0; s < nslots && ok; ++s) ok = filled[s];
  if (!ok) { PyErr_Clear(); clear_entry(e); Py_RETURN_FALSE; }
  if (self->count == MAX_ENTRIES) {
    clear_entry(self->entries[0]);
    memmove(self->entries, self->entries + 1, (MAX_ENTRIES - 1) * sizeof(Entry *));
    --self->count;
  }
  self->entries[self->count++] = e;
  Py_RETURN_TRUE;
}

static PyObject *express_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  Express *self = (Express *)type->tp_alloc(type, 0);
  if (self == NULL) return NULL;
  if (!PyArg_ParseTuple(args, "OUUO!O!O", &self->selected, &self->env, &self->fallback, &PyList_Type,
                        &self->epoch, &PyList_Type, &self->hooks, &self->foreign)) {
    self->selected = self->env = self->fallback = self->epoch = self->hooks = self->foreign = NULL;
    Py_DECREF(self);
    return NULL;
  }
  PyObject **held[] = {&self->selected, &self->env, &self->fallback, &self->epoch, &self->hooks, &self->foreign};
  for (size_t i = 0; i < sizeof held / sizeof *held; ++i) Py_INCREF(*held[i]);
  self->vectorcall = express_call;
  return (PyObject *)self;
}

static void express_dealloc(PyObject *op) {
  Express *self = (Express *)op;
  for (int i = 0; i < self->count; ++i) clear_entry(self->entries[i]);
  Py_XDECREF(self->selected); Py_XDECREF(self->env); Py_XDECREF(self->fallback); Py_XDECREF(self->epoch);
  Py_XDECREF(self->hooks); Py_XDECREF(self->foreign);
  Py_TYPE(op)->tp_free(op);
}

/* kernel[grid] with a lane: calls try the lane on the call's own argument array, then the launcher
 * (``fallback``), which every attribute is read from: it looks like the launcher it wraps. */
typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *lane, *grid, *fallback, *checked; /* checked: the launcher's Python path, lane not tried again */
} Bound;

static PyObject *bound_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Bound *self = (Bound *)op;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
  if (try_launch((Express *)self->lane, self->grid, args, nargs, nkw ? &PyTuple_GET_ITEM(kwnames, 0) : NULL, nkw))
    Py_RETURN_NONE;
  return PyObject_Vectorcall(self->checked, args, nargsf, kwnames);
}

static PyObject *bound_getattr(PyObject *op, PyObject *name) { return PyObject_GetAttr(((Bound *)op)->fallback, name); }

static PyObject *bound_repr(PyObject *op) { return PyObject_Repr(((Bound *)op)->fallback); }

static int bound_traverse(PyObject *op, visitproc visit, void *arg) {  /* kernel -> its last launcher -> kernel */
  Bound *self = (Bound *)op;
  Py_VISIT(self->lane); Py_VISIT(self->grid); Py_VISIT(self->fallback); Py_VISIT(self->checked);
  return 0;
}

static int bound_clear(PyObject *op) {
  Bound *self = (Bound *)op;
  Py_CLEAR(self->lane); Py_CLEAR(self->grid); Py_CLEAR(self->fallback); Py_CLEAR(self->checked);
  return 0;
}

static void bound_dealloc(PyObject *op) {
  PyObject_GC_UnTrack(op);
  bound_clear(op);
  PyObject_GC_Del(op);
}

static PyTypeObject BoundType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tile_lang_express.Bound",
    .tp_basicsize = sizeof(Bound),
    .tp_dealloc = bound_dealloc,
    .tp_vectorcall_offset = offsetof(Bound, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = bound_repr,
    .tp_getattro = bound_getattr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_traverse = bound_traverse,
    .tp_clear = bound_clear,
    .tp_doc = "kernel[grid] whose calls try the kernel's express lane first.",
};

static PyObject *express_bind(PyObject *op, PyObject *const *argv, Py_ssize_t nargs) {
  if (nargs != 2) { PyErr_SetString(PyExc_TypeError, "bind(grid, launcher)"); return NULL; }
  PyObject *checked = PyObject_GetAttrString(argv[1], "checked");
  if (checked == NULL) return NULL;
  Bound *bound = PyObject_GC_New(Bound, &BoundType);
  if (bound == NULL) { Py_DECREF(checked); return NULL; }
  bound->checked = checked;
  bound->vectorcall = bound_call;
  Py_INCREF(op); bound->lane = op;
  Py_INCREF(argv[0]); bound->grid = argv[0];
  Py_INCREF(argv[1]); bound->fallback = argv[1];
  PyObject_GC_Track((PyObject *)bound);
  return (PyObject *)bound;
}

static PyObject *express_entries(PyObject *op, PyObject *unused) {
  return PyLong_FromLong(((Express *)op)->count);
}

static PyMethodDef express_methods[] = {
    {"record", (PyCFunction)(void (*)(void))express_record, METH_FASTCALL, "Keep a launch's facts and its plan."},
    {"entries", express_entries, METH_NOARGS, "How many launches are kept."},
    {"bind", (PyCFunction)(void (*)(void))express_bind, METH_FASTCALL, "kernel[grid] trying this lane first."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ExpressType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tile_lang_express.Express",
    .tp_basicsize = sizeof(Express),
    .tp_dealloc = express_dealloc,
    .tp_vectorcall_offset = offsetof(Express, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Repeat launches of one kernel, compared and launched without Python frames.",
    .tp_methods = express_methods,
    .tp_new = express_new,
};

/* A stand-in for cuLaunchKernel that launches nothing (benchmarks of the host side). */
static int noop_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, void *stream, void **params, void **extra) {
  return 0;
}

static PyObject *noop_address(PyObject *module, PyObject *unused) {
  return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)noop_launch);
}

static PyMethodDef module_methods[] = {
    {"noop_address", noop_address, METH_NOARGS, "The address of a launch function that does nothing."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "tile_lang_express", NULL, -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_tile_lang_express(void) {
  const char *names[] = {"dtype", "get_device", "data_ptr", "strides", "_c_contiguous", "data", "device_id", "ptr", "backend",
                         "type", "device", "torch"};
  PyObject **slots[] = {&s_dtype, &s_get_device, &s_data_ptr, &s_strides, &s_c_contiguous, &s_data, &s_device_id, &s_ptr,
                        &s_backend, &s_type, &s_device, &s_torch};
  for (size_t i = 0; i < sizeof names / sizeof *names; ++i)
    if ((*slots[i] = PyUnicode_InternFromString(names[i])) == NULL) return NULL;
  if (PyType_Ready(&ExpressType) < 0 || PyType_Ready(&BoundType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  Py_INCREF(&ExpressType);
  if (PyModule_AddObject(m, "Express", (PyObject *)&ExpressType) < 0) { Py_DECREF(&ExpressType); Py_DECREF(m); return NULL; }
  return m;
}
