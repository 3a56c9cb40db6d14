"""Request serializers give each instance its own copies of the declared fields (shallow ones, as
deep copies cost more CPU than a write's INSERTs): what one changes on its fields stays its own."""

from __future__ import annotations

from rest_api.serializers.memories import MemoryCreateSerializer, MemoryUpdateSerializer

CREATE = {"scope_type": "organization", "memory_type": "fact", "current_content": "Deploys run on merge."}


def test_an_update_making_fields_optional_leaves_create_requiring_them() -> None:
    update = MemoryUpdateSerializer(data={"title": "Only a title"})
    assert update.is_valid(), update.errors
    create = MemoryCreateSerializer(data={"title": "Only a title"})
    assert not create.is_valid()
    assert set(create.errors) == {"scope_type", "memory_type", "current_content"}


def test_each_serializer_has_its_own_fields() -> None:
    first, second = MemoryCreateSerializer(data=CREATE), MemoryCreateSerializer(data=CREATE)
    assert first.fields["title"] is not second.fields["title"]
    assert first.fields["title"].parent is first
    assert second.fields["title"].parent is second
    assert MemoryCreateSerializer._declared_fields["title"].parent is None  # the class's own stay unbound


def test_validation_answers_the_same_every_time() -> None:
    bad = {**CREATE, "importance": 11, "tags": ["ok", ""]}
    errors = [MemoryCreateSerializer(data=bad) for _ in range(3)]
    for serializer in errors:
        assert not serializer.is_valid()
    assert errors[0].errors == errors[1].errors == errors[2].errors
    assert set(errors[0].errors) == {"importance", "tags"}
    good = MemoryCreateSerializer(data=CREATE)
    assert good.is_valid(), good.errors
    assert good.validated_data["current_content"] == "Deploys run on merge."
