"""The learned-priority-function study (Carastan-Santos & de Camargo, SC'17)."""
