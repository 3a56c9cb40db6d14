import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")

application = get_asgi_application()

# A web worker process of `manage.py serve` (several run, one per core) ends with it, however it ends.
if supervisor := os.environ.get("MEMORY_PLATFORM_SERVE_PID"):
    from memory_platform.worker import die_with

    die_with(int(supervisor))
