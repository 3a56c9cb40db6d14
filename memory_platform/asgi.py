import os

from django.core.asgi import get_asgi_application

from memory_platform.worker import die_with_server

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")

application = get_asgi_application()

# A web process a server started (`manage.py serve` runs one per core) ends with that server.
die_with_server()
