"""Resources packaged with the app: icons, styles and bundled data (model shapes, the
calibration set). Installed as advisor.resources."""
