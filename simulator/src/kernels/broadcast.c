/* broadcast.c: building and walking broadcast plans (see broadcast.h). */
#include "broadcast.h"

#include <string.h>

void bc_plan_strided(bc_plan *p, int rank, const int64_t *dims, int n_ops, const int64_t (*strides)[RD_MAX_RANK])
{
    memset(p, 0, sizeof *p);
    p->n_ops = n_ops;
    int r = 0;
    for (int d = 0; d < rank; d++) {
        if (dims[d] == 1)
            continue; /* a size-1 dim never moves any offset */
        bool merge = r > 0;
        for (int k = 0; k < n_ops && merge; k++)
            merge = p->st[k][r - 1] == strides[k][d] * dims[d];
        if (merge) {
            p->dims[r - 1] *= dims[d];
            for (int k = 0; k < n_ops; k++)
                p->st[k][r - 1] = strides[k][d];
        } else {
            p->dims[r] = dims[d];
            for (int k = 0; k < n_ops; k++)
                p->st[k][r] = strides[k][d];
            r++;
        }
    }
    if (r == 0) { /* a scalar or all ones: one row of one element */
        p->dims[0] = 1;
        r = 1;
    }
    p->rank = r;
}

void bc_plan_broadcast(bc_plan *p, int out_rank, const int64_t *out_dims, int n_in, const int *in_rank,
                       const int64_t *const *in_dims)
{
    int64_t st[BC_MAX_OPS][RD_MAX_RANK];
    memset(st, 0, sizeof st);
    int64_t s = 1;
    for (int d = out_rank - 1; d >= 0; d--) {
        st[0][d] = s;
        s *= out_dims[d];
    }
    for (int k = 0; k < n_in && k + 1 < BC_MAX_OPS; k++) {
        int off = out_rank - in_rank[k];
        int64_t is = 1;
        for (int d = out_rank - 1; d >= off && d >= 0; d--) {
            int64_t dim = in_dims[k][d - off];
            st[k + 1][d] = dim == 1 ? 0 : is;
            is *= dim;
        }
    }
    bc_plan_strided(p, out_rank, out_dims, n_in + 1, (const int64_t(*)[RD_MAX_RANK])st);
}

void bc_run(const bc_plan *p, bc_row_fn row, void *user)
{
    int r = p->rank;
    for (int d = 0; d < r; d++)
        if (p->dims[d] == 0)
            return;
    int64_t off[BC_MAX_OPS] = {0}, inner[BC_MAX_OPS] = {0}, idx[RD_MAX_RANK] = {0};
    for (int k = 0; k < p->n_ops; k++)
        inner[k] = p->st[k][r - 1];
    int64_t n = p->dims[r - 1];
    for (;;) {
        row(user, n, off, inner);
        int d = r - 2;
        for (; d >= 0; d--) {
            for (int k = 0; k < p->n_ops; k++)
                off[k] += p->st[k][d];
            if (++idx[d] < p->dims[d])
                break;
            for (int k = 0; k < p->n_ops; k++)
                off[k] -= p->st[k][d] * p->dims[d];
            idx[d] = 0;
        }
        if (d < 0)
            return;
    }
}
