import TokenGate

// `tokengate serve …`: everything is in the TokenGate library target, so that
// its tests drive the same code.
await TokenGateCommand.runFromCommandLine()
