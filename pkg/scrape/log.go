package scrape

// logTransition logs one line when the endpoint's health changes, never on
// repeated failures in the same state.
func (s *Scraper) logTransition(t Target, prev, next Status, first bool, err error) {
	from, to := healthOf(prev), healthOf(next)
	if first {
		from = healthNew
	}
	if from == to {
		return
	}
	log := s.log.WithValues("endpoint", t.Key, "url", t.URL, "from", from.String())
	switch to {
	case healthOK:
		if from == healthNew {
			log.V(1).Info("metrics scrape ok")
			return
		}
		log.Info("metrics scrape recovered", "failures", prev.ConsecutiveFailures)
	case healthFailing:
		log.Info("metrics scrape failing", "reason", reasonOf(err), "error", next.LastError)
	case healthStale:
		log.Info("scraped metrics stale, load signals not trusted",
			"lastSampleAt", next.Sample.ScrapedAt, "failures", next.ConsecutiveFailures, "error", next.LastError)
	case healthExcluded:
		log.Info("endpoint excluded after consecutive scrape failures",
			"failures", next.ConsecutiveFailures, "error", next.LastError)
	}
}
