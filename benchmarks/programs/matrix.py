"""Pure-Python matrices: a Matrix class over lists of lists with multiplication,
transposition, LU decomposition with partial pivoting and a solve. Prints residuals."""


class Matrix:
    def __init__(self, rows):
        self.rows = rows
        self.n = len(rows)

    @classmethod
    def generated(cls, n, seed):
        state, rows = seed, []
        for i in range(n):
            row = []
            for j in range(n):
                state = (state * 1664525 + 1013904223) % 2**32
                row.append((state % 1000) / 100.0 + (10.0 if i == j else 0.0))
            rows.append(row)
        return cls(rows)

    def transpose(self):
        return Matrix([list(col) for col in zip(*self.rows)])

    def __matmul__(self, other):
        cols = other.transpose().rows
        return Matrix([[sum(a * b for a, b in zip(row, col)) for col in cols] for row in self.rows])

    def lu(self):
        n = self.n
        a = [row[:] for row in self.rows]
        perm = list(range(n))
        for k in range(n):
            pivot = max(range(k, n), key=lambda i: abs(a[i][k]))
            a[k], a[pivot] = a[pivot], a[k]
            perm[k], perm[pivot] = perm[pivot], perm[k]
            for i in range(k + 1, n):
                a[i][k] /= a[k][k]
                factor = a[i][k]
                row_i, row_k = a[i], a[k]
                for j in range(k + 1, n):
                    row_i[j] -= factor * row_k[j]
        return a, perm

    def solve(self, b):
        a, perm = self.lu()
        n = self.n
        y = [b[p] for p in perm]
        for i in range(n):
            y[i] -= sum(a[i][j] * y[j] for j in range(i))
        x = [0.0] * n
        for i in reversed(range(n)):
            x[i] = (y[i] - sum(a[i][j] * x[j] for j in range(i + 1, n))) / a[i][i]
        return x


for seed in (1, 2, 3):
    m = Matrix.generated(110, seed)
    b = [float(i % 7) for i in range(110)]
    x = m.solve(b)
    residual = max(abs(sum(m.rows[i][j] * x[j] for j in range(110)) - b[i]) for i in range(110))
    product = m @ m.transpose()
    print(seed, f"{residual:.3e}", round(sum(map(sum, product.rows)), 6))
