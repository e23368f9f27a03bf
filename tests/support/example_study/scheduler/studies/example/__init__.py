"""An example study: the jobs of each filtered log, counted and scaled."""
