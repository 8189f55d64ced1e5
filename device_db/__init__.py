"""The device catalogue: curated, cited device specifications (data in devices/*.json)."""
