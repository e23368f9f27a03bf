"""The redirection study (Faure, Lucarelli, Richard, Trystram): weeks, plan, statistics, figures,
steps."""
