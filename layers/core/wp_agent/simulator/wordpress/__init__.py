"""WordPress core behaviour the simulated commands rely on (posts, terms, users, dates, slugs)."""
