package lockorder

// GoExperimentEnv is set by the syncwatch command for the test binaries it
// builds with an experiment of its own in GOEXPERIMENT (the runtime's leak
// detection, under Go 1.26): it holds the GOEXPERIMENT the user had ("="
// and its value), or is empty if there was none. lockorder's
// initialisation puts that back, so that a go command a test runs sees
// the user's setting, not syncwatch's. Not for other uses.
const GoExperimentEnv = "SYNCWATCH_GOEXPERIMENT"
