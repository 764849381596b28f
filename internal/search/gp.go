package search

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// gp is a Gaussian process of one standardized output over [0, 1]^d with
// a squared-exponential kernel: k(a, b) = exp(−|a − b|² / 2ℓ²), signal
// variance 1 on the standardized scale, and noise variance noise. Its
// hyperparameters (ℓ, noise) are the pair of a small grid with the
// largest log marginal likelihood: with the tens of points a search
// measures, a grid is as good as gradient ascent and cannot diverge.
type gp struct {
	x         [][]float64
	mean, std float64 // of the raw outputs
	ell       float64
	noise     float64
	chol      mat.Cholesky
	alpha     *mat.VecDense
}

// The hyperparameter grid of fitGP.
var (
	gpLengths = []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 2}
	gpNoises  = []float64{1e-6, 1e-3, 1e-2, 0.05, 0.2}
)

var errGPFit = errors.New("gp: no hyperparameters give a positive definite kernel")

func sqdist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// fitGP fits the process to outputs y at inputs x (not copied: the
// caller keeps them unchanged).
func fitGP(x [][]float64, y []float64) (*gp, error) {
	gs, _, err := fitGPs(x, y)
	if err != nil {
		return nil, err
	}
	return gs[0], nil
}

// fitGPs fits the process for every pair of the hyperparameter grid that
// gives a positive definite kernel, the most likely first, with each
// pair's log marginal likelihood in the outputs' own units (so that fits
// of different outputs, residuals of different prior means, compare).
func fitGPs(x [][]float64, y []float64) ([]*gp, []float64, error) {
	n := len(y)
	mean, std := 0.0, 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(n)
	for _, v := range y {
		std += (v - mean) * (v - mean)
	}
	std = math.Sqrt(std / float64(n))
	switch {
	case std == 0 || math.IsNaN(std):
		std = 1
	case std < 1e-9:
		std = 1e-9
	}
	ys := mat.NewVecDense(n, nil)
	for i, v := range y {
		ys.SetVec(i, (v-mean)/std)
	}
	var gs []*gp
	var lmls []float64
	k := mat.NewSymDense(n, nil)
	for _, ell := range gpLengths {
		for _, noise := range gpNoises {
			for i := range n {
				for j := i; j < n; j++ {
					v := math.Exp(-sqdist(x[i], x[j]) / (2 * ell * ell))
					if i == j {
						v += noise
					}
					k.SetSym(i, j, v)
				}
			}
			g := &gp{x: x, mean: mean, std: std, ell: ell, noise: noise}
			if !g.chol.Factorize(k) {
				continue
			}
			g.alpha = mat.NewVecDense(n, nil)
			if err := g.chol.SolveVecTo(g.alpha, ys); err != nil {
				continue
			}
			// log p(y) = −½ yᵀα − ½ log|K| − n/2 log 2π
			lml := -0.5*mat.Dot(ys, g.alpha) - 0.5*g.chol.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
			gs, lmls = append(gs, g), append(lmls, lml)
		}
	}
	if len(gs) == 0 {
		return nil, nil, errGPFit
	}
	top := 0
	for i, l := range lmls {
		if l > lmls[top] {
			top = i
		}
	}
	gs[0], gs[top] = gs[top], gs[0]
	lmls[0], lmls[top] = lmls[top], lmls[0]
	// The standardized outputs' likelihood, back in the outputs' units.
	for i := range lmls {
		lmls[i] -= float64(n) * math.Log(std)
	}
	return gs, lmls, nil
}

// predict returns the posterior mean and standard deviation at u, in the
// raw outputs' units.
func (g *gp) predict(u []float64) (mu, sd float64) {
	n := len(g.x)
	ks := mat.NewVecDense(n, nil)
	for i, xi := range g.x {
		ks.SetVec(i, math.Exp(-sqdist(xi, u)/(2*g.ell*g.ell)))
	}
	m := mat.Dot(ks, g.alpha)
	v := mat.NewVecDense(n, nil)
	if err := g.chol.SolveVecTo(v, ks); err != nil {
		return g.mean, g.std
	}
	variance := max(1-mat.Dot(ks, v), 1e-12)
	return g.mean + g.std*m, g.std * math.Sqrt(variance)
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
func normPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }

// expectedImprovement is E[max(best − f, 0)] for f ~ N(mu, sd²): the
// improvement over best of minimizing f.
func expectedImprovement(mu, sd, best float64) float64 {
	if sd <= 0 {
		return max(best-mu, 0)
	}
	z := (best - mu) / sd
	return (best-mu)*normCDF(z) + sd*normPDF(z)
}
