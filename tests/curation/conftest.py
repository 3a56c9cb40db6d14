from tests.admin.conftest import login, make_staff  # noqa: F401 - the fixtures, for the tests here
