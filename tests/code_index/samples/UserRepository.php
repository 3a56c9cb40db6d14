<?php
namespace App\Repositories;

use PDO;

/** Reads and writes users. */
class UserRepository
{
    public function __construct(private PDO $db)
    {
    }

    public function findByEmail(string $email): ?array
    {
        $statement = $this->db->prepare('SELECT id, name, email FROM users WHERE email = :email LIMIT 1');
        $statement->execute(['email' => strtolower(trim($email))]);
        $row = $statement->fetch(PDO::FETCH_ASSOC);
        return $row === false ? null : $row;
    }
}

function normalize_email(string $email): string
{
    return strtolower(trim($email)) . (str_contains($email, '@') ? '' : '@example.invalid');
}
