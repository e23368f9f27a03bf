"""The memory-aware cluster study (Yom-Tov & Aridor, JSSPP 2007): plan, statistics, figures,
steps."""
