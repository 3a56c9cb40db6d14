from django.apps import AppConfig


class McpApiConfig(AppConfig):
    name = "mcp_api"
    verbose_name = "MCP"
