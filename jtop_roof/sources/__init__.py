"""Sources of samples. Every source yields ``model.Record`` objects through one interface, so the
UI, the recorder and the headless ``record`` command never care which source they read."""
