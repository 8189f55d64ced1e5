"""The device catalogue: cited records loaded from the packaged device_db, name resolution, and
the compute each llama.cpp backend can really use on a device."""
