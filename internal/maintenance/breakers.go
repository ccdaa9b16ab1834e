package maintenance

// unusedBreakers forgets this process's open breakers of destinations no
// live subscription delivers to any more (Dispatcher.ForgetUnusedBreakers):
// nothing else would close them.
//
// Leader: every delivering instance: breakers are per process.
func unusedBreakers(o Options) Service {
	return Service{
		Name: "unused_breakers", Interval: o.ReapInterval, Leader: EveryInstance,
		RunOnce: o.Dispatcher.ForgetUnusedBreakers,
	}
}
