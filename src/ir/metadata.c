/* metadata.c — where an instruction came from, read from its `metadata={...}` attribute as
 * JAX and TensorFlow write it: op_name="jit(f)/mul", and either source_file="x.py"
 * source_line=12 or (newer dumps) stack_frame_id=7 into the module's StackFrames tables. The
 * attribute is kept verbatim (a raw attribute), so this reads it on demand: traces and error
 * messages are the only users and neither is on a hot path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/metadata.h"

static const char *raw_value(const cx_instr *in, const char *key) {
  for (int i = 0; i < in->a.nraw; i++)
    if (!strcmp(in->a.raw[i].key, key)) return in->a.raw[i].value;
  return NULL;
}

/* The value of `key=` in a metadata text: a quoted string (escapes kept as written) or a bare
 * token. Copies at most n-1 bytes to out; 0 if the key is absent. */
static int field(const char *md, const char *key, char *out, size_t n) {
  size_t kl = strlen(key);
  for (const char *p = md; (p = strstr(p, key)); p += kl) {
    if ((p > md && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'))) || p[kl] != '=') continue;
    const char *v = p + kl + 1;
    size_t len = 0;
    if (*v == '"') { /* a quoted string: its escapes undone */
      for (v++; *v && *v != '"'; v++) {
        if (*v == '\\' && v[1]) v++;
        if (len < n - 1) out[len++] = *v;
      }
    } else {
      for (; *v && *v != ' ' && *v != ',' && *v != '}'; v++)
        if (len < n - 1) out[len++] = *v;
    }
    out[len] = 0;
    return 1;
  }
  return 0;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

int cx_instr_origin(const cx_instr *in, cx_origin *o) {
  memset(o, 0, sizeof *o);
  const char *md = raw_value(in, "metadata");
  if (!md) return 0;
  field(md, "op_name", o->op_name, sizeof o->op_name);
  char file[256], line[32], frame[32];
  if (field(md, "source_file", file, sizeof file) && field(md, "source_line", line, sizeof line)) {
    snprintf(o->source, sizeof o->source, "%.120s:%.20s", base_name(file), line);
  } else if (field(md, "stack_frame_id", frame, sizeof frame) && in->parent && in->parent->module) {
    cx_module_frame_source(in->parent->module, strtoll(frame, NULL, 10), o->source, sizeof o->source);
  }
  return o->op_name[0] || o->source[0];
}

int cx_kernel_origin(const cx_instr *in, cx_origin *o) {
  if (cx_instr_origin(in, o) && o->source[0]) return 1;
  if (in->op != CX_OP_FUSION || in->ncalled != 1) return o->op_name[0] != 0;
  /* a fusion made by cxla has no metadata of its own: its root's, else its first op's */
  const cx_comp *fc = in->called[0];
  if (fc->root && cx_instr_origin(fc->root, o)) return 1;
  for (int i = 0; i < fc->ninstrs; i++)
    if (cx_instr_origin(fc->instrs[i], o)) return 1;
  return 0;
}

const char *const cx_frame_table_names[CX_FRAME_TABLES] = {"FileNames", "FunctionNames", "FileLocations",
                                                           "StackFrames"};

static const char *table_entry(const cx_module *m, int table, int64_t id) {
  char key[24];
  snprintf(key, sizeof key, "%lld", (long long)id);
  for (int i = 0; i < m->nframes[table]; i++)
    if (!strcmp(m->frames[table][i].key, key)) return m->frames[table][i].value;
  return NULL;
}

static int64_t int_field(const char *text, const char *key) {
  char v[32];
  return text && field(text, key, v, sizeof v) ? strtoll(v, NULL, 10) : -1;
}

int cx_module_frame_source(const cx_module *m, int64_t frame, char *out, size_t n) {
  out[0] = 0;
  const char *fr = table_entry(m, CX_FRAME_STACKS, frame);
  const char *loc = table_entry(m, CX_FRAME_LOCATIONS, int_field(fr, "file_location_id"));
  const char *file = table_entry(m, CX_FRAME_FILES, int_field(loc, "file_name_id"));
  int64_t line = int_field(loc, "line");
  if (!file || line < 0) return 0;
  char path[256];
  size_t len = strlen(file);
  if (len >= 2 && file[0] == '"') file++, len -= 2; /* the entry is a quoted string */
  snprintf(path, sizeof path, "%.*s", (int)len, file);
  snprintf(out, n, "%.120s:%lld", base_name(path), (long long)line);
  return 1;
}
