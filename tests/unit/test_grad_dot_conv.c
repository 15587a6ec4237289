/* test_grad_dot_conv.c — gradients of dot (random numbers of batch, contracting and free
 * dims, each operand's dims in a random order) and convolution (1 or 2 spatial dims, random
 * dim_labels, strides, padding (also negative), input and kernel dilation, feature groups and
 * batch groups) with respect to both operands, against finite differences. */
#include "grad_helpers.h"

static void dot(gh_case *c) {
  int nb, nc, nlf, nrf;
  do nb = (int)gh_int(c, 0, 2), nc = (int)gh_int(c, 0, 2), nlf = (int)gh_int(c, 0, 2), nrf = (int)gh_int(c, 0, 2);
  while (nb + nc + nlf > 4 || nb + nc + nrf > 4);
  int64_t bsz[2], csz[2], lf[2], rf[2];
  gh_dims(c, bsz, nb, 3);
  gh_dims(c, csz, nc, 3);
  gh_dims(c, lf, nlf, 3);
  gh_dims(c, rf, nrf, 3);
  /* role of each position: 0..nb-1 batch, then contracting, then free */
  int lr = nb + nc + nlf, rr = nb + nc + nrf;
  int64_t lp[4], rp[4], ld[4], rd[4], lb[2], rb[2], lc[2], rc[2], yd[6];
  gh_perm(c, lp, lr);
  gh_perm(c, rp, rr);
  for (int i = 0; i < lr; i++) {
    int64_t role = lp[i];
    ld[i] = role < nb ? bsz[role] : role < nb + nc ? csz[role - nb] : lf[role - nb - nc];
    if (role < nb) lb[role] = i;
    else if (role < nb + nc) lc[role - nb] = i;
  }
  for (int i = 0; i < rr; i++) {
    int64_t role = rp[i];
    rd[i] = role < nb ? bsz[role] : role < nb + nc ? csz[role - nb] : rf[role - nb - nc];
    if (role < nb) rb[role] = i;
    else if (role < nb + nc) rc[role - nb] = i;
  }
  int ny = 0;
  for (int i = 0; i < nb; i++) yd[ny++] = bsz[i];
  for (int i = 0; i < lr; i++) /* free dims in operand order */
    if (lp[i] >= nb + nc) yd[ny++] = ld[i];
  for (int i = 0; i < rr; i++)
    if (rp[i] >= nb + nc) yd[ny++] = rd[i];
  gh_begin(c);
  gh_param(c, "a", gh_shape(c, "f64", ld, lr), 1);
  gh_param(c, "b", gh_shape(c, "f64", rd, rr), 1);
  gh_add(c, "  y = %s dot(a, b), lhs_batch_dims=%s, rhs_batch_dims=%s,", gh_shape(c, "f64", yd, ny), gh_list(c, lb, nb),
         gh_list(c, rb, nb));
  gh_add(c, " lhs_contracting_dims=%s, rhs_contracting_dims=%s\n", gh_list(c, lc, nc), gh_list(c, rc, nc));
  gh_end_loss(c, "y", yd, ny);
}

/* A random order of the labels: dims[k] gets labels[k] at a random position. */
static void labels(gh_case *c, const char *names, int n, char *out, int64_t *pos) {
  int64_t p[4];
  gh_perm(c, p, n);
  for (int k = 0; k < n; k++) {
    out[p[k]] = names[k];
    pos[k] = p[k];
  }
  out[n] = 0;
}

static void convolution(gh_case *c) {
  int ns = (int)gh_int(c, 1, 2), r = ns + 2;
  int64_t fg = 1, bg = 1;
  int64_t groups = gh_int(c, 0, 2);
  if (groups == 1) fg = 2;
  if (groups == 2) bg = 2;
  int64_t N = bg * gh_int(c, 1, 2), KI = gh_int(c, 1, 2), C = fg * KI, KO = fg * bg * gh_int(c, 1, 2);
  int64_t in_sp[2], k_sp[2], out_sp[2];
  char win[256], size[16] = "", stride[16] = "", pad[32] = "", ld[16] = "", rd[16] = "";
  for (int i = 0; i < ns; i++) {
    int64_t st, lo, hi, l, w, padded, span;
    do {
      in_sp[i] = gh_int(c, 2, 5), k_sp[i] = gh_int(c, 1, 3), st = gh_int(c, 1, 2);
      lo = gh_int(c, -1, 1), hi = gh_int(c, -1, 1), l = gh_int(c, 1, 2), w = gh_int(c, 1, 2);
      padded = (in_sp[i] - 1) * l + 1 + lo + hi, span = (k_sp[i] - 1) * w + 1;
    } while (padded < span);
    out_sp[i] = (padded - span) / st + 1;
    const char *x = i ? "x" : "";
    snprintf(size + strlen(size), sizeof size - strlen(size), "%s%lld", x, (long long)k_sp[i]);
    snprintf(stride + strlen(stride), sizeof stride - strlen(stride), "%s%lld", x, (long long)st);
    snprintf(pad + strlen(pad), sizeof pad - strlen(pad), "%s%lld_%lld", x, (long long)lo, (long long)hi);
    snprintf(ld + strlen(ld), sizeof ld - strlen(ld), "%s%lld", x, (long long)l);
    snprintf(rd + strlen(rd), sizeof rd - strlen(rd), "%s%lld", x, (long long)w);
  }
  snprintf(win, sizeof win, "{size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s}", size, stride, pad, ld, rd);
  char ll[5], kl[5], ol[5];
  int64_t lpos[4], kpos[4], opos[4], xd[4], kd[4], yd[4];
  labels(c, ns == 1 ? "bf0" : "bf01", r, ll, lpos);
  labels(c, ns == 1 ? "io0" : "io01", r, kl, kpos);
  labels(c, ns == 1 ? "bf0" : "bf01", r, ol, opos);
  xd[lpos[0]] = N, xd[lpos[1]] = C, kd[kpos[0]] = KI, kd[kpos[1]] = KO, yd[opos[0]] = N / bg, yd[opos[1]] = KO;
  for (int i = 0; i < ns; i++) xd[lpos[2 + i]] = in_sp[i], kd[kpos[2 + i]] = k_sp[i], yd[opos[2 + i]] = out_sp[i];
  gh_begin(c);
  gh_param(c, "x", gh_shape(c, "f64", xd, r), 1);
  gh_param(c, "k", gh_shape(c, "f64", kd, r), 1);
  gh_add(c, "  y = %s convolution(x, k), window=%s, dim_labels=%s_%s->%s", gh_shape(c, "f64", yd, r), win, ll, kl, ol);
  if (fg > 1) gh_add(c, ", feature_group_count=%lld", (long long)fg);
  if (bg > 1) gh_add(c, ", batch_group_count=%lld", (long long)bg);
  gh_add(c, "\n");
  gh_end_loss(c, "y", yd, r);
}

const gh_entry gh_dot_conv_cases[] = {{"dot", dot}, {"convolution", convolution}};
const int gh_dot_conv_ncases = GH_LEN(gh_dot_conv_cases);

TEST(grad_dot_conv) { gh_run_table(gh_dot_conv_cases, gh_dot_conv_ncases, 16); }
