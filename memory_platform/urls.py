from django.contrib import admin
from django.urls import path

from mcp_api.views import mcp_endpoint
from memory_platform.views import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("mcp", mcp_endpoint, name="mcp"),
]
