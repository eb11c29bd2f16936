/* CPython's own algorithms for the `math` functions that it does not take from the C
 * library: gamma, lgamma, hypot and remainder (Modules/mathmodule.c). Native code
 * calls these instead of going through the interpreter (which took the GIL for each
 * call), and gets the same bits, because the operations are the same ones, in the
 * same order, on the same C library functions (exp, pow, log, sin, cos, fmod, sqrt,
 * fma): this file is compiled with -ffp-contract=off, so no product and sum are
 * fused where CPython's build does not fuse them (x86-64's baseline has no FMA, and
 * CPython's build adds none).
 *
 * Errors are not reported here: CPython raises exactly where the result is a NaN
 * from arguments that are not NaNs or an infinity from finite arguments (it sets
 * errno on those paths and only those), and native code tests that itself (see
 * lower/numeric.deopt_on_float_error), as for the C library's functions. hypot never
 * raises.
 *
 * hypot follows the algorithm of the running Python: 3.12 made its squares exact with
 * fma() where 3.11 splits each number in halves (Veltkamp) and sums three fractions.
 */
#include <Python.h>
#include <float.h>
#include <math.h>
#include "runtime.h"

static const double PI = 3.141592653589793238462643383279502884197;
static const double LOG_PI = 1.144729885849400174143427351353058711647;

/* sin(pi * x), exact at the integers and half-integers (CPython's m_sinpi). */
static double sin_pi(double x) {
    double y = fmod(fabs(x), 2.0), r;
    switch ((int)round(2.0 * y)) {
    case 0:
        r = sin(PI * y);
        break;
    case 1:
        r = cos(PI * (y - 0.5));
        break;
    case 2:
        r = sin(PI * (1.0 - y)); /* (not -sin(PI * (y - 1.0)): -0.0 at y == 1) */
        break;
    case 3:
        r = -cos(PI * (y - 1.5));
        break;
    default:
        r = sin(PI * (y - 2.0));
        break;
    }
    return copysign(1.0, x) * r;
}

/* The Lanczos approximation with N = 13, g = 6.024680040776729583740234375, as a
 * rational function (Boost's parameters, which CPython uses). */
#define LANCZOS_N 13
static const double LANCZOS_G = 6.024680040776729583740234375;
static const double LANCZOS_G_MINUS_HALF = 5.524680040776729583740234375;
static const double LANCZOS_NUM[LANCZOS_N] = {
    23531376880.410759688572007674451636754734846804940,
    42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843,
    17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708,
    1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801,
    31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768,
    186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024,
    210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408,
};
static const double LANCZOS_DEN[LANCZOS_N] = {
    0.0, 39916800.0, 120543840.0, 150917976.0, 105258076.0, 45995730.0,
    13339535.0, 2637558.0, 357423.0, 32670.0, 1925.0, 66.0, 1.0,
};
#define EXACT_GAMMAS 23 /* gamma(1) ... gamma(23) */
static const double GAMMA_OF_INTEGER[EXACT_GAMMAS] = {
    1.0, 1.0, 2.0, 6.0, 24.0, 120.0, 720.0, 5040.0, 40320.0, 362880.0,
    3628800.0, 39916800.0, 479001600.0, 6227020800.0, 87178291200.0,
    1307674368000.0, 20922789888000.0, 355687428096000.0,
    6402373705728000.0, 121645100408832000.0, 2432902008176640000.0,
    51090942171709440000.0, 1124000727777607680000.0,
};

/* The Lanczos sum for x > 0: in x below 5, in 1/x above (no overflow for large x). */
static double lanczos_sum(double x) {
    double num = 0.0, den = 0.0;
    if (x < 5.0) {
        for (int k = LANCZOS_N - 1; k >= 0; k--) {
            num = num * x + LANCZOS_NUM[k];
            den = den * x + LANCZOS_DEN[k];
        }
    } else {
        for (int k = 0; k < LANCZOS_N; k++) {
            num = num / x + LANCZOS_NUM[k];
            den = den / x + LANCZOS_DEN[k];
        }
    }
    return num / den;
}

double cb_tgamma(double x) {
    if (!isfinite(x))
        return isnan(x) || x > 0.0 ? x : Py_NAN; /* (-inf: a domain error) */
    if (x == 0.0)
        return copysign(INFINITY, x); /* (a pole) */
    if (x == floor(x)) {
        if (x < 0.0)
            return Py_NAN; /* (a pole) */
        if (x <= EXACT_GAMMAS)
            return GAMMA_OF_INTEGER[(int)x - 1];
    }
    double absx = fabs(x);
    if (absx < 1e-20)
        return 1.0 / x; /* (tiny: ~1/x, and an overflow below ~1e-308) */
    if (absx > 200.0)
        return x < 0.0 ? 0.0 / sin_pi(x) : INFINITY;
    /* The error of y = absx + g - 0.5 corrects the result (z), as CPython does. */
    double y = absx + LANCZOS_G_MINUS_HALF, z, r;
    if (absx > LANCZOS_G_MINUS_HALF) {
        double q = y - absx;
        z = q - LANCZOS_G_MINUS_HALF;
    } else {
        double q = y - LANCZOS_G_MINUS_HALF;
        z = q - absx;
    }
    z = z * LANCZOS_G / y;
    if (x < 0.0) {
        r = -PI / sin_pi(absx) / absx * exp(y) / lanczos_sum(absx);
        r -= z * r;
        if (absx < 140.0) {
            r /= pow(y, absx - 0.5);
        } else {
            double half = pow(y, absx / 2.0 - 0.25);
            r /= half;
            r /= half;
        }
    } else {
        r = lanczos_sum(absx) / exp(y);
        r += z * r;
        if (absx < 140.0) {
            r *= pow(y, absx - 0.5);
        } else {
            double half = pow(y, absx / 2.0 - 0.25);
            r *= half;
            r *= half;
        }
    }
    return r;
}

double cb_lgamma(double x) {
    if (!isfinite(x))
        return isnan(x) ? x : INFINITY;
    if (x == floor(x) && x <= 2.0)
        return x <= 0.0 ? INFINITY : 0.0; /* (a pole at the integers <= 0) */
    double absx = fabs(x);
    if (absx < 1e-20)
        return -log(absx);
    double r = log(lanczos_sum(absx)) - LANCZOS_G;
    r += (absx - 0.5) * (log(absx + LANCZOS_G - 0.5) - 1);
    if (x < 0.0)
        r = LOG_PI - log(fabs(sin_pi(absx))) - log(absx) - r; /* (reflection) */
    return r;
}

/* IEEE 754's remainder, x - n*y for the nearest multiple n*y (ties to even n). */
double cb_remainder(double x, double y) {
    if (isfinite(x) && isfinite(y)) {
        if (y == 0.0)
            return Py_NAN;
        double absx = fabs(x), absy = fabs(y), m = fmod(absx, absy), c = absy - m, r;
        if (m < c)
            r = m;
        else if (m > c)
            r = -c;
        else
            r = m - 2.0 * fmod(0.5 * (absx - m), absy); /* (halfway: the even multiple) */
        return copysign(1.0, x) * r;
    }
    if (isnan(x))
        return x;
    if (isnan(y))
        return y;
    if (isinf(x))
        return Py_NAN;
    return x;
}

/* sqrt(sum of the squares of the n values in xs, all >= 0 and finite, largest `max`),
 * with exact squares, compensated sums and a corrected square root. */
static double vector_norm(int64_t n, double *xs, double max) {
    if (max == 0.0 || n <= 1)
        return max;
    int max_e;
    frexp(max, &max_e);
    double csum = 1.0, h, x;
#if PY_VERSION_HEX >= 0x030C0000
    if (max_e < -1023) { /* 2**-max_e would overflow: subnormals, made normal first */
        for (int64_t k = 0; k < n; k++)
            xs[k] /= DBL_MIN;
        return DBL_MIN * vector_norm(n, xs, max / DBL_MIN);
    }
    double scale = ldexp(1.0, -max_e);
    double frac1 = 0.0, frac2 = 0.0;
    for (int64_t k = 0; k < n; k++) {
        x = xs[k] * scale; /* (exact) */
        double square = x * x, square_error = fma(x, x, -square);
        double sum = csum + square, sum_error = (csum - sum) + square;
        csum = sum;
        frac1 += square_error;
        frac2 += sum_error;
    }
    h = sqrt(csum - 1.0 + (frac1 + frac2));
    double square = -h * h, square_error = fma(-h, h, -square);
    double sum = csum + square, sum_error = (csum - sum) + square;
    csum = sum;
    frac1 += square_error;
    frac2 += sum_error;
    x = csum - 1.0 + (frac1 + frac2);
    h += x / (2.0 * h);
    return h / scale;
#else
    double frac1 = 0.0, frac2 = 0.0, frac3 = 0.0, before, t, hi, lo;
    if (max_e < -1023) { /* 2**-max_e would overflow: each value divided by max */
        for (int64_t k = 0; k < n; k++) {
            x = xs[k] / max;
            x = x * x;
            before = csum;
            csum += x;
            frac1 += (before - csum) + x;
        }
        return max * sqrt(csum - 1.0 + frac1);
    }
    const double split = 134217729.0; /* 2**27 + 1 */
    double scale = ldexp(1.0, -max_e);
    for (int64_t k = 0; k < n; k++) {
        x = xs[k] * scale;
        t = x * split;
        hi = t - (t - x);
        lo = x - hi;
        x = hi * hi;
        before = csum;
        csum += x;
        frac1 += (before - csum) + x;
        x = 2.0 * hi * lo;
        before = csum;
        csum += x;
        frac2 += (before - csum) + x;
        frac3 += lo * lo;
    }
    h = sqrt(csum - 1.0 + (frac1 + frac2 + frac3));
    t = h * split;
    hi = t - (t - h);
    lo = h - hi;
    x = -hi * hi;
    before = csum;
    csum += x;
    frac1 += (before - csum) + x;
    x = -2.0 * hi * lo;
    before = csum;
    csum += x;
    frac2 += (before - csum) + x;
    x = -lo * lo;
    before = csum;
    csum += x;
    frac3 += (before - csum) + x;
    x = csum - 1.0 + (frac1 + frac2 + frac3);
    return (h + x / (2.0 * h)) / scale;
#endif
}

/* math.hypot(*xs[:n]); xs is overwritten. An infinity wins over a NaN. */
double cb_hypot(int64_t n, double *xs) {
    double max = 0.0;
    int nan = 0;
    for (int64_t k = 0; k < n; k++) {
        double x = fabs(xs[k]);
        xs[k] = x;
        nan |= isnan(x);
        if (x > max)
            max = x;
    }
    if (isinf(max))
        return max;
    if (nan)
        return Py_NAN;
    return vector_norm(n, xs, max);
}

/* Whether cb_hypot squares with fma() (CPython 3.12 and later) rather than splitting
 * each value in halves (3.11): lower/norms.py emits the same steps inline. */
int32_t cb_hypot_uses_fma(void) { return PY_VERSION_HEX >= 0x030C0000; }
