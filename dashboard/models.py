"""Django discovers models here; each lives with the part of the data flow that owns it."""
