/* lionmem's C speedups (issue 7): two hot loops, each with a Python specification and stand-in.
 *
 * 1. The cached text scan of InMemoryStore.
 *
 * scan(chunk, sources, lowered, start, needle, needed) -> (hits, missed)
 *
 * The same walk as lionmem.stores.memory._walk_cached, which is its specification and its
 * stand-in when this module is not built:
 *
 *     for cached, low, item in zip(sources[start:], lowered[start:], chunk):
 *         if item.content is not cached:
 *             return hits, item
 *         if needle in low:
 *             hits.append(item)
 *             if len(hits) == needed:
 *                 break
 *     return hits, None
 *
 * The speed comes from reading `item.content` straight from the item's __dict__, without the
 * attribute machinery (about 40% of the time of the loop above at 100,000 items). That gives
 * the same object exactly when the item's type reads `content` from the __dict__ too: its
 * __getattribute__ is object's, no data descriptor named `content` is on its MRO (one would
 * win over the __dict__), and it has a __dict__. An item of any other type, or whose __dict__
 * holds no `content`, is returned as missed, and the caller evaluates it the exact, slow way,
 * as it does an item whose content is not the cached string.
 *
 * No Python code runs here, except in two cases the loop above shares: a dict lookup that meets
 * a non-str key with the same hash as "content" calls that key's __eq__, and a chunk that is
 * not the store's own iterator runs whatever it runs. So the lists' sizes are checked at every
 * step, a cache entry read before such code is used only if it is still in its list afterwards
 * (otherwise the item is handed back as missed), and a type is trusted only while its version
 * tag is the one it had when it was checked (any change to the class or a base gives it a new
 * one).
 *
 * 2. The construction fast path's pre-check (lionmem/_base.py, _fast_init).
 *
 * init_ready(data, names) -> bool
 *
 * Whether Model(**data) may try the fast validator: every key is a field name, and `metadata` is
 * absent or an exact dict without "lion_class". Every key looked at, in `data` and in
 * `metadata`, must be an exact str, so that no user code runs here (a str subclass's __hash__
 * or __eq__, or the __eq__ of a metadata key hashing like "lion_class", could change the input
 * before it is validated); anything else goes to the class's own validator. The Python closure
 * that runs when this module is not built writes the same test out, except that it hashes the
 * keyword names without looking at their type first.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The SHA-256 of this file, given by the build (tools/build_speedups.py), so that a test can
   tell a module built from another version of the source. */
#ifndef SPEEDUPS_SOURCE_SHA256
#define SPEEDUPS_SOURCE_SHA256 ""
#endif

static PyObject *content_key;          /* interned "content" */
static PyObject *metadata_key;         /* interned "metadata" */
static PyObject *lion_class_key;       /* interned "lion_class" */
static PyObject *getattribute_key;     /* interned "__getattribute__" */
static PyObject *object_getattribute;  /* object.__getattribute__, the slot wrapper */

/* Whether `item.content` is the value in the item's __dict__ whenever that dict holds one. */
static int
reads_dict(PyTypeObject *type)
{
    if (type->tp_dictoffset == 0) {
        return 0; /* no __dict__ */
    }
    if (_PyType_Lookup(type, getattribute_key) != object_getattribute) {
        return 0;
    }
    PyObject *descriptor = _PyType_Lookup(type, content_key);
    if (descriptor != NULL && Py_TYPE(descriptor)->tp_descr_set != NULL) {
        return 0;
    }
    return 1;
}

/* An index argument as a Py_ssize_t, clamped (a limit may exceed any list's size). */
static int
index_arg(PyObject *value, Py_ssize_t *out)
{
    *out = PyNumber_AsSsize_t(value, NULL);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *
scan(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_Format(PyExc_TypeError, "scan() takes 6 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *sources = args[1], *lowered = args[2], *needle = args[4];
    if (!PyList_CheckExact(sources) || !PyList_CheckExact(lowered)) {
        PyErr_SetString(PyExc_TypeError, "scan() takes lists for sources and lowered");
        return NULL;
    }
    Py_ssize_t position, needed;
    if (index_arg(args[3], &position) < 0 || index_arg(args[5], &needed) < 0) {
        return NULL;
    }
    if (position < 0) {
        PyErr_SetString(PyExc_ValueError, "scan() takes a start of 0 or more");
        return NULL;
    }
    PyObject *chunk = PyObject_GetIter(args[0]);
    if (chunk == NULL) {
        return NULL;
    }
    PyObject *hits = PyList_New(0);
    if (hits == NULL) {
        Py_DECREF(chunk);
        return NULL;
    }
    /* The last type that passed reads_dict(), held, with the version tag it had then: any change
       to it or to a base (even by code run during this call) gives it a new tag. */
    PyTypeObject *checked = NULL;
    unsigned int checked_tag = 0;
    PyObject *missed = NULL;
    /* As zip(iter(sources)[start:], iter(lowered)[start:], chunk): each step reads the cached
       string, then its lowered text, then takes the next item; the walk ends, without taking
       another item, where either list ends. The two entries are not referenced (a reference
       would write to the cached string, one more cache miss per item at 100,000 items): if
       either changed while the item was taken (only code the chunk runs could do that), the
       item is handed back as missed, for the caller to evaluate the exact, slow way. */
    for (;; position++) {
        if (position >= PyList_GET_SIZE(sources) || position >= PyList_GET_SIZE(lowered)) {
            break;
        }
        PyObject *cached = PyList_GET_ITEM(sources, position); /* borrowed, compared only */
        PyObject *low = PyList_GET_ITEM(lowered, position);    /* borrowed, compared only */
        PyObject *item = PyIter_Next(chunk);                   /* a new reference */
        if (item == NULL) {
            if (PyErr_Occurred()) {
                goto error;
            }
            break;
        }
        if (position >= PyList_GET_SIZE(sources) || position >= PyList_GET_SIZE(lowered)
            || PyList_GET_ITEM(sources, position) != cached
            || PyList_GET_ITEM(lowered, position) != low) {
            missed = item;
            break;
        }
        PyTypeObject *type = Py_TYPE(item);
        if (type != checked || checked_tag == 0 || type->tp_version_tag != checked_tag) {
            Py_CLEAR(checked);
            if (!reads_dict(type)) {
                missed = item;
                break;
            }
            checked = (PyTypeObject *)Py_NewRef(type);
            checked_tag = type->tp_version_tag; /* 0 if none could be given: checked every time */
        }
        PyObject *dict = PyObject_GenericGetDict(item, NULL); /* a new reference */
        if (dict == NULL) {
            Py_DECREF(item);
            goto error;
        }
        PyObject *content = PyDict_GetItemWithError(dict, content_key); /* borrowed */
        Py_DECREF(dict);
        if (content == NULL && PyErr_Occurred()) {
            Py_DECREF(item);
            goto error;
        }
        /* No `content` in the dict (the attribute machinery decides), or not the cached string.
           The lookup may have run code (a colliding key's __eq__): the entries are read again,
           and `content` is only compared, so it needs no reference of its own. */
        if (content == NULL || position >= PyList_GET_SIZE(sources)
            || content != PyList_GET_ITEM(sources, position) || content != cached
            || position >= PyList_GET_SIZE(lowered) || PyList_GET_ITEM(lowered, position) != low) {
            missed = item;
            break;
        }
        Py_INCREF(low);
        int found = PySequence_Contains(low, needle);
        Py_DECREF(low);
        if (found < 0) {
            Py_DECREF(item);
            goto error;
        }
        if (found) {
            int appended = PyList_Append(hits, item);
            Py_DECREF(item);
            if (appended < 0) {
                goto error;
            }
            if (PyList_GET_SIZE(hits) == needed) {
                break;
            }
        }
        else {
            Py_DECREF(item);
        }
    }
    Py_XDECREF(checked);
    Py_DECREF(chunk);
    if (missed == NULL) {
        missed = Py_NewRef(Py_None);
    }
    return Py_BuildValue("(NN)", hits, missed);
error:
    Py_XDECREF(checked);
    Py_DECREF(chunk);
    Py_DECREF(hits);
    return NULL;
}

static PyObject *
init_ready(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "init_ready() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *data = args[0], *names = args[1];
    if (!PyDict_CheckExact(data) || !PyFrozenSet_CheckExact(names)) {
        PyErr_SetString(PyExc_TypeError, "init_ready() takes a dict and a frozenset");
        return NULL;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(data, &position, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            Py_RETURN_FALSE;
        }
        int known = PySet_Contains(names, key); /* an exact str: no user code */
        if (known < 0) {
            return NULL;
        }
        if (!known) {
            Py_RETURN_FALSE;
        }
    }
    PyObject *metadata = PyDict_GetItemWithError(data, metadata_key); /* borrowed */
    if (metadata == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_TRUE;
    }
    if (!PyDict_CheckExact(metadata)) {
        Py_RETURN_FALSE;
    }
    position = 0;
    while (PyDict_Next(metadata, &position, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            Py_RETURN_FALSE;
        }
    }
    int named = PyDict_Contains(metadata, lion_class_key); /* exact str keys: no user code */
    if (named < 0) {
        return NULL;
    }
    return PyBool_FromLong(!named);
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(chunk, sources, lowered, start, needle, needed) -> (hits, missed)\n\n"
     "The cached text scan; see lionmem.stores.memory._walk_cached."},
    {"init_ready", (PyCFunction)(void (*)(void))init_ready, METH_FASTCALL,
     "init_ready(data, names) -> bool\n\n"
     "Whether Model(**data) may try the fast validator; see lionmem._base._fast_init."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "lionmem._speedups",
    "lionmem's C speedups: InMemoryStore's cached text scan, construction's pre-check.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    content_key = PyUnicode_InternFromString("content");
    getattribute_key = PyUnicode_InternFromString("__getattribute__");
    metadata_key = PyUnicode_InternFromString("metadata");
    lion_class_key = PyUnicode_InternFromString("lion_class");
    if (content_key == NULL || getattribute_key == NULL || metadata_key == NULL
        || lion_class_key == NULL) {
        return NULL;
    }
    /* object's own slot wrapper, as _PyType_Lookup finds it (object.tp_dict is not to be read
       directly: from Python 3.12 on it is NULL for the built-in types). */
    object_getattribute = PyObject_GetAttr((PyObject *)&PyBaseObject_Type, getattribute_key);
    if (object_getattribute == NULL) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddStringConstant(module, "SOURCE_SHA256", SPEEDUPS_SOURCE_SHA256) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
