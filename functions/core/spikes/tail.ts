/**
 * Upper tail probabilities of count distributions, in the log domain: how surprising an observed
 * count is against what was expected. A spike of 13,000 mentions against 50 expected has a tail
 * probability far below the smallest double (1e-308), so everything here returns log10 p, never
 * p itself, and is exact enough at any size (continued fractions, not normal approximations).
 *
 * The negative binomial with mean `mean` and size `size` (variance `mean + mean² / size`) is the
 * count model of docs/spikes.md: Poisson (size → ∞) when the counts vary only by chance, wider
 * when the rhythm of news makes them vary more.
 *
 * Pure: no I/O, no clock.
 */

const LN10 = Math.log(10);

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; about 15 significant digits). */
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0] as number;
  for (let i = 1; i < LANCZOS.length; i++) sum += (LANCZOS[i] as number) / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  return h;
}

/** ln of the regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1. */
export function lnIncompleteBeta(a: number, b: number, x: number): number {
  if (x <= 0) return Number.NEGATIVE_INFINITY;
  if (x >= 1) return 0;
  const lnFront = lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return lnFront + Math.log(betaFraction(a, b, x)) - Math.log(a);
  // The other side converges; the complement is not small there, so plain arithmetic is exact enough.
  const complement = Math.exp(lnFront + Math.log(betaFraction(b, a, 1 - x)) - Math.log(b));
  return Math.log(Math.max(Number.MIN_VALUE, 1 - complement));
}

/** Sizes above this are treated as Poisson (a negative binomial that wide is one). */
export const POISSON_SIZE = 1e7;

/**
 * log10 P(X ≥ observed) for X negative binomial with mean `mean` and size `size` (variance
 * mean + mean²/size); `size` ≥ {@link POISSON_SIZE} is Poisson. 0 (p = 1) for observed ≤ 0.
 */
export function log10UpperTail(observed: number, mean: number, size: number): number {
  const x = Math.ceil(observed);
  if (x <= 0) return 0;
  if (!(mean > 0)) return Number.NEGATIVE_INFINITY;
  if (size >= POISSON_SIZE) return lnLowerGammaRegularized(x, mean) / LN10;
  // X ≤ k has probability I_q(size, k + 1) with q = size / (size + mean); so
  // P(X ≥ x) = 1 - I_q(size, x) = I_{1-q}(x, size).
  const oneMinusQ = mean / (size + mean);
  return lnIncompleteBeta(x, size, oneMinusQ) / LN10;
}

/** ln P(a, x), the regularized lower incomplete gamma function (P(Poisson(x) ≥ a) for integer a). */
export function lnLowerGammaRegularized(a: number, x: number): number {
  if (x <= 0) return Number.NEGATIVE_INFINITY;
  const lnFront = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    // Series: P(a, x) = front · Σ x^n / (a (a+1) … (a+n)).
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 10_000; n++) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-15) break;
    }
    return lnFront + Math.log(sum);
  }
  // Continued fraction for Q(a, x); P = 1 - Q is not small here.
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  const q = Math.exp(lnFront) * h;
  return Math.log(Math.max(Number.MIN_VALUE, 1 - q));
}
