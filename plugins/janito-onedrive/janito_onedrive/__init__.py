"""OneDrive through Microsoft Graph."""
