"""The authorization server's endpoints (django-oauth-toolkit's, with our consent page) and its metadata.

RFC 8414 and RFC 9728 place the metadata documents at the origin's ``/.well-known/``; the
endpoints live under ``/oauth/``. One namespace, as the toolkit's views reverse each other by it.
"""

from django.urls import path
from oauth2_provider import views as oauth_views
from oauth2_provider.urls import dcr_urlpatterns, metadata_urlpatterns

from identity.views import ConsentView, RegistrationView

app_name = "oauth2_provider"

urlpatterns = [
    *metadata_urlpatterns,
    path("oauth/authorize/", ConsentView.as_view(), name="authorize"),
    path("oauth/token/", oauth_views.TokenView.as_view(), name="token"),
    path("oauth/revoke_token/", oauth_views.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/introspect/", oauth_views.IntrospectTokenView.as_view(), name="introspect"),
    path("oauth/register/", RegistrationView.as_view(), name="dcr-register"),
    *[
        path(f"oauth/{pattern.pattern}", pattern.callback, name=pattern.name)
        for pattern in dcr_urlpatterns
        if pattern.name != "dcr-register"
    ],
]
