//go:build syncwatch_off

package lockorder

// restoreGoExperiment does nothing in the syncwatch_off build, which the
// syncwatch command does not build with an experiment of its own (and
// which links no more of os than sync does).
func restoreGoExperiment() {}
