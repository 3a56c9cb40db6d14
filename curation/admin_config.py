from django.contrib.admin.apps import AdminConfig


class CuratorAdminConfig(AdminConfig):
    """Django's admin, on the curators' site (curation.site.CuratorSite) instead of the stock one."""

    default_site = "curation.site.CuratorSite"
