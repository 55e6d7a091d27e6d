package main

import (
	"math/rand/v2"

	"github.com/syncwatch/syncwatch/paramserver"
)

// The model is linear regression, y = w·x + b, trained on synthetic data
// with mean squared error: small enough to train in milliseconds, real
// enough that the loss visibly falls and a stale or lost update shows.

const (
	features      = 4
	samplesPerRnk = 64
	noise         = 0.05
	learningRate  = 0.1
	// lossTarget is the final loss a converged run stays below: the noise
	// variance is 0.0025.
	lossTarget = 0.01
	// gradLen is the length of a worker's contribution to the all-reduce:
	// the gradient of w, of b, and the worker's loss, so that the mean the
	// all-reduce computes carries the global loss too.
	gradLen = features + 2
)

// trueW and trueB generate the data.
var (
	trueW = [features]float64{2, -3, 0.5, 1}
	trueB = 0.7
)

// shard is one worker's slice of the training data.
type shard struct {
	x [][features]float64
	y []float64
}

// newShard generates rank's data, the same on every run.
func newShard(rank int) shard {
	r := rand.New(rand.NewPCG(2024_03_19, uint64(rank)))
	s := shard{x: make([][features]float64, samplesPerRnk), y: make([]float64, samplesPerRnk)}
	for i := range s.x {
		y := trueB
		for j := range features {
			s.x[i][j] = r.NormFloat64()
			y += trueW[j] * s.x[i][j]
		}
		s.y[i] = y + noise*r.NormFloat64()
	}
	return s
}

// initialParams are the parameters of version 0: all zero.
func initialParams() paramserver.Params {
	return paramserver.Params{"w": make([]float32, features), "b": make([]float32, 1)}
}

// gradient returns the gradient of s's mean squared error at p, and the
// loss, as one vector of gradLen: dw..., db, loss.
func (s shard) gradient(p paramserver.Params) []float64 {
	out := make([]float64, gradLen)
	n := float64(len(s.y))
	for i, x := range s.x {
		r := float64(p["b"][0]) - s.y[i]
		for j := range features {
			r += float64(p["w"][j]) * x[j]
		}
		for j := range features {
			out[j] += 2 * r * x[j] / n
		}
		out[features] += 2 * r / n
		out[features+1] += r * r / n
	}
	return out
}

// asParams turns the gradient part of a gradLen vector into the shape of
// the parameters, for the parameter server.
func asParams(g []float64) paramserver.Params {
	w := make([]float32, features)
	for j := range w {
		w[j] = float32(g[j])
	}
	return paramserver.Params{"w": w, "b": {float32(g[features])}}
}

// lossOf is the loss component of a gradLen vector.
func lossOf(g []float64) float64 { return g[features+1] }

// sgdStep returns p - lr*grad, leaving p unchanged.
func sgdStep(p, grad paramserver.Params) paramserver.Params {
	out := p.Clone()
	for k, g := range grad {
		for i := range g {
			out[k][i] -= learningRate * g[i]
		}
	}
	return out
}

// meanLoss is the loss of p over every shard.
func meanLoss(shards []shard, p paramserver.Params) float64 {
	var sum float64
	for _, s := range shards {
		sum += lossOf(s.gradient(p))
	}
	return sum / float64(len(shards))
}
