"""One environment the Dockerfile's pip lines installed, shared by the deploy modules (the install is
minutes: Airflow and its ~200 dependencies).

What each module checks is read from it once, right after the build and before anything else touches
it (test_wheel.py installs the wheel over it last): pip's consistency check, the installed versions,
the DAGs parsed and the stack's modules imported in a process of the environment, and what
``pip install -r requirements.txt`` would still install into it.
"""

from __future__ import annotations

import pytest

from tests.integration.deploy.image import ImageInstall, install_image


@pytest.fixture(scope="session")
def image_install(tmp_path_factory: pytest.TempPathFactory) -> ImageInstall:
    return install_image(tmp_path_factory.mktemp("image"))
