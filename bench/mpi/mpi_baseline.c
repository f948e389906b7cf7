/* The MPI baselines of `coflowkit shuffle run` and `coflowkit collective bench` (issue 16):
 * Open MPI's MPI_Alltoallv on the same shuffle matrix, and MPI_Bcast / MPI_Gather /
 * MPI_Allgather latencies at the same sizes. Built and run by bench/transport.sh only; the
 * test suite never needs MPI.
 *
 *   mpi_baseline alltoallv MATRIX AVG_BYTES REPS   -> one JSON line: completion seconds per rep
 *   mpi_baseline coll OP BYTES REPS                 -> one JSON line: p50/p99 microseconds
 *
 * MATRIX is coflowkit's text format ("nodes N packets" or "nodes N normalized", then N rows).
 * Bytes of cell (i, j) = round(w(i, j) * AVG_BYTES) where w is the matrix normalized to mean 1,
 * computed in the same order as coflowkit's `MatrixFile::normalized` so both move the same bytes.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *msg, const char *arg) {
    fprintf(stderr, "mpi_baseline: %s %s\n", msg, arg ? arg : "");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Reads the matrix; returns n and fills *bytes (n*n, row = sender). */
static int read_matrix(const char *path, double avg, long long **bytes) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open", path);
    char line[1 << 16];
    int n = -1, normalized = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == 0) continue;
        char unit[32];
        if (sscanf(p, "nodes %d %31s", &n, unit) != 2 || n <= 0) die("bad header in", path);
        normalized = strcmp(unit, "normalized") == 0;
        break;
    }
    if (n <= 0) die("no header in", path);
    double *w = malloc(sizeof(double) * n * n);
    for (long i = 0; i < (long)n * n; i++)
        if (fscanf(f, "%lf", &w[i]) != 1) die("short matrix in", path);
    fclose(f);
    if (!normalized) {
        double total = 0;
        for (long i = 0; i < (long)n * n; i++) total += w[i];
        double scale = total > 0 ? (double)n * n / total : 0;
        for (long i = 0; i < (long)n * n; i++) w[i] = w[i] * scale;
    }
    *bytes = malloc(sizeof(long long) * n * n);
    for (long i = 0; i < (long)n * n; i++) (*bytes)[i] = llround(w[i] * avg);
    free(w);
    return n;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) die("usage: alltoallv MATRIX AVG_BYTES REPS | coll OP BYTES REPS", NULL);
    int reps = atoi(argv[4]);
    if (reps <= 0) die("REPS must be positive:", argv[4]);
    double *t = malloc(sizeof(double) * reps);

    if (strcmp(argv[1], "alltoallv") == 0) {
        long long *b;
        int n = read_matrix(argv[2], atof(argv[3]), &b);
        if (n != size) die("matrix nodes differ from ranks in", argv[2]);
        int *sc = calloc(n, sizeof(int)), *sd = calloc(n, sizeof(int));
        int *rc = calloc(n, sizeof(int)), *rd = calloc(n, sizeof(int));
        long long so = 0, ro = 0;
        for (int j = 0; j < n; j++) {
            /* The diagonal is local data: it never crosses the network in either world. */
            sc[j] = j == rank ? 0 : (int)b[(long)rank * n + j];
            rc[j] = j == rank ? 0 : (int)b[(long)j * n + rank];
            sd[j] = (int)so; rd[j] = (int)ro;
            so += sc[j]; ro += rc[j];
        }
        char *sb = malloc(so + 1), *rb = malloc(ro + 1);
        for (long long i = 0; i < so; i++) sb[i] = (char)(i * 131 + rank);
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
            double mine = MPI_Wtime() - t0, all;
            MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            t[r] = all;
        }
        if (rank == 0) {
            printf("{\"op\": \"alltoallv\", \"ranks\": %d, \"completion_s\": [", size);
            for (int r = 0; r < reps; r++) printf("%s%.9f", r ? ", " : "", t[r]);
            printf("]}\n");
        }
    } else if (strcmp(argv[1], "coll") == 0) {
        const char *op = argv[2];
        int bytes = atoi(argv[3]);
        char *buf = calloc((size_t)bytes * size + 1, 1);
        char *all = calloc((size_t)bytes * size + 1, 1);
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (strcmp(op, "bcast") == 0)
                MPI_Bcast(buf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
            else if (strcmp(op, "gather") == 0)
                MPI_Gather(buf, bytes, MPI_BYTE, all, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
            else if (strcmp(op, "allgather") == 0)
                MPI_Allgather(buf, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD);
            else if (strcmp(op, "barrier") == 0)
                MPI_Barrier(MPI_COMM_WORLD);
            else
                die("unknown op", op);
            double mine = MPI_Wtime() - t0, mx;
            MPI_Reduce(&mine, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            t[r] = mx;
        }
        if (rank == 0) {
            qsort(t, reps, sizeof(double), cmp);
            double p50 = t[reps / 2], p99 = t[(int)fmin(reps - 1, floor(reps * 0.99))];
            printf("{\"op\": \"%s\", \"ranks\": %d, \"bytes\": %d, \"p50_us\": %.3f, \"p99_us\": %.3f}\n",
                   op, size, bytes, p50 * 1e6, p99 * 1e6);
        }
    } else {
        die("unknown mode", argv[1]);
    }
    MPI_Finalize();
    return 0;
}
